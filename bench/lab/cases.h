// The lab's cases, one factory per kernel of the registry (bench/lab/case.h has the interface;
// make_case picks among these). Dimensions in the registry's order for the kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/lab/case.h"

namespace laptime::lab {

std::unique_ptr<LabCase> make_layernorm_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_bias_gelu_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_attention_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_embedding_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_residual_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_residual_layernorm_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_quantize_case(const std::vector<int64_t>& dims);
std::unique_ptr<LabCase> make_amax_case(const std::vector<int64_t>& dims);
std::unique_ptr<LabCase> make_maxpool_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_avgpool_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_conv_epilogue_case(const std::vector<int64_t>& dims, DType dtype);
std::unique_ptr<LabCase> make_stem_case(const std::vector<int64_t>& dims, DType dtype);

// Draws `t` by kind: Random uniform in ±scale, Zeros, Huge uniform in huge_offset ± huge_scale.
void draw(LabTensor& t, InputKind kind, uint32_t seed, float scale, float huge_offset, float huge_scale,
          cudaStream_t stream);

}  // namespace laptime::lab
