// GELU forward: a pure streaming kernel (one read, one write per element), so the only
// thing that matters is memory throughput: 16-byte loads and stores (8 bf16 or 4 fp32 per
// thread per step; a scalar loop for a ragged tail), a grid-stride loop, fp32 math, and
// accurate expf (a fast approximation would cost the fp32 1e-5 bound). The bias variant adds a
// per-channel bias first in the same pass (laptime lab's bias_gelu v4; the models put the bias
// in the GEMM before).
#include "kernels/gelu.cuh"

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/gelu_math.cuh"

namespace laptime {
namespace {

// With kBias, element i adds bias[i % C] first; the vector path then needs C to be a whole number
// of vectors (the launcher checks), so each vector's elements are C-consecutive channels of one row.
template <class T, bool kBias>
__global__ void gelu_kernel(T* out, const T* in, const T* __restrict__ bias, int64_t n, int C) {
  constexpr int kVec = 16 / sizeof(T);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t n_vec = n / kVec;  // whole 16-byte vectors; the launcher checked alignment
  for (int64_t v = first; v < n_vec; v += stride) {
    uint4 raw = reinterpret_cast<const uint4*>(in)[v];
    T* e = reinterpret_cast<T*>(&raw);
    if constexpr (kBias) {
      const uint4 b_raw = reinterpret_cast<const uint4*>(bias)[(v * kVec % C) / kVec];
      const T* b = reinterpret_cast<const T*>(&b_raw);
#pragma unroll
      for (int k = 0; k < kVec; ++k) e[k] = from_f32<T>(gelu(to_f32(e[k]) + to_f32(b[k])));
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) e[k] = from_f32<T>(gelu(to_f32(e[k])));
    }
    reinterpret_cast<uint4*>(out)[v] = raw;
  }
  for (int64_t i = n_vec * kVec + first; i < n; i += stride)
    out[i] = from_f32<T>(gelu(to_f32(in[i]) + (kBias ? to_f32(bias[i % C]) : 0.f)));
}

template <class T, bool kBias>
__global__ void gelu_scalar_kernel(T* out, const T* in, const T* __restrict__ bias, int64_t n, int C) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = from_f32<T>(gelu(to_f32(in[i]) + (kBias ? to_f32(bias[i % C]) : 0.f)));
}

template <bool kBias>
void launch(DType dtype, void* out, const void* in, const void* bias, int64_t n, int C, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = grid_stride_blocks(n, kThreads);
  const bool aligned =
      (reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(bias)) % 16 ==
      0;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    auto* y = static_cast<scalar_t*>(out);
    const auto* x = static_cast<const scalar_t*>(in);
    const auto* b = static_cast<const scalar_t*>(bias);
    if (aligned && (!kBias || C % (16 / sizeof(scalar_t)) == 0))
      gelu_kernel<scalar_t, kBias><<<blocks, kThreads, 0, stream>>>(y, x, b, n, C);
    else
      gelu_scalar_kernel<scalar_t, kBias><<<blocks, kThreads, 0, stream>>>(y, x, b, n, C);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void gelu_forward(DType dtype, void* out, const void* in, int64_t n, cudaStream_t stream) {
  launch<false>(dtype, out, in, nullptr, n, 1, stream);
}

void bias_gelu_forward(DType dtype, void* out, const void* in, const void* bias, int rows, int C, cudaStream_t stream) {
  launch<true>(dtype, out, in, bias, static_cast<int64_t>(rows) * C, C, stream);
}

}  // namespace laptime
