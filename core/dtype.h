// Element types of tensors in files and on the device, and the run-time precision choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace laptime {

// Element types laptime reads from safetensors files or keeps on the device.
enum class DType { F32, F16, BF16, F64, I32, I64, U8 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);          // safetensors spelling: "F32", "BF16", ...
bool parse_dtype(const std::string& s, DType* out);

// How a model computes. Chosen at model build; weights are converted on upload.
//   FP32: fp32 storage and math, tensor-core TF32 forbidden (strict).
//   TF32: fp32 storage, GEMMs/convolutions may round inputs to TF32 on tensor cores.
//   BF16: bf16 weights and activations, fp32 accumulation, norm/softmax statistics in fp32.
enum class Precision { FP32, TF32, BF16 };

const char* precision_name(Precision p);  // "fp32", "tf32", "bf16"

// Storage type of weights and activations for a precision.
inline DType activation_dtype(Precision p) { return p == Precision::BF16 ? DType::BF16 : DType::F32; }

}  // namespace laptime
