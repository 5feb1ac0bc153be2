// GPT-2's GELU on the device, in fp32: kernels/gelu.cu's production form, and the tanh form it
// replaced (kept for laptime lab's bias_gelu ladder, kernels/lab/gelu.cu). For .cu files only.
#pragma once

#include <cuda_runtime.h>

namespace laptime {

// 0.5·x·(1 + tanh(z)) written as x / (1 + exp(-2z)) (the same function: 1 + tanh(z) =
// 2 / (1 + e^(-2z))). The tanh form cancels for z << 0: at x = -4.5, 1 + tanh(z) ≈ 2e-4 keeps
// only the last bits of tanh's result, a 4e-5 relative error on the output (fp32, measured on
// the H200); the exp form has no cancellation anywhere. expf, not __expf: fp32 must hold 1e-5.
__device__ __forceinline__ float gelu(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  const float z = kSqrt2OverPi * (x + 0.044715f * x * x * x);
  return x / (1.f + expf(-2.f * z));
}

// The form as the paper writes it, 0.5·x·(1 + tanh(z)): cancels for x << 0 (above).
__device__ __forceinline__ float gelu_tanh_form(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

}  // namespace laptime
