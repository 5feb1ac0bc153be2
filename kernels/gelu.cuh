// GELU, tanh approximation (GPT-2's `gelu_new`):
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out, in: n elements of `dtype` (F32 or BF16); out may equal in.
void gelu_forward(DType dtype, void* out, const void* in, int64_t n, cudaStream_t stream);
// out = gelu(in + bias[c]): out, in [rows, C], bias [C]; out may equal in.
void bias_gelu_forward(DType dtype, void* out, const void* in, const void* bias, int rows, int C, cudaStream_t stream);

}  // namespace laptime
