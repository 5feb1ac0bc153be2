// LayerNorm over the last dimension: out = (in - mean) / sqrt(var + eps) * weight + bias.
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out, in: [rows, C] of `dtype` (F32 or BF16); weight, bias: [C] of `dtype`.
// Statistics in fp32 whatever the storage type.
void layernorm_forward(DType dtype, void* out, const void* in, const void* weight, const void* bias, int rows, int C,
                       float eps, cudaStream_t stream);
// The same, writing `out_dtype`: `dtype`, or F16 from F32 (tf32's fp16 attention projections).
void layernorm_forward(DType dtype, DType out_dtype, void* out, const void* in, const void* weight, const void* bias,
                       int rows, int C, float eps, cudaStream_t stream);
// One of the kernels layernorm_forward chooses from, whatever it would choose (laptime lab's
// layernorm v2-v6; kernels/layernorm.cu says what each is). Where the fast path cannot run the
// shape (C not whole 16-byte vectors, a row past 2048 bf16 / 1024 fp32, a misaligned pointer),
// every path runs the general kernel, as layernorm_forward does.
enum class LayerNormPath {
  General,          // three passes over the row, the second and third from L1 (v2; the fallback)
  WidestRegisters,  // the row in registers, sized for the widest row (v3)
  SizedRegisters,   // the row in registers, sized to the row (v4)
  OneWave,          // v4 at 32 registers a thread for rows of up to 3 vectors a lane (v5)
  Dependent,        // v5 launched as a programmatic dependent of the kernel before it (v6, production)
};
void layernorm_forward_path(LayerNormPath path, DType dtype, void* out, const void* in, const void* weight,
                            const void* bias, int rows, int C, float eps, cudaStream_t stream);
// bf16 in, e4m3 out: out = e4m3(layernorm(in) · *out_inv_scale), saturated (fp8's GEMM inputs;
// the inverse scale is the consuming layer's, kernels/fp8.cuh).
void layernorm_forward_fp8(void* out, const float* out_inv_scale, DType dtype, const void* in, const void* weight,
                           const void* bias, int rows, int C, float eps, cudaStream_t stream);
// Whether layernorm_forward, at `dtype` and row width C (16-byte aligned rows), launches its kernel
// on the current device as a programmatic dependent of the kernel before it: only where that
// kernel's code waits for it (built for compute capability 9.0 or newer). For tests.
bool layernorm_launches_dependent(DType dtype, int C);

}  // namespace laptime
