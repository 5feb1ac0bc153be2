// Bias + residual + ReLU, elementwise over an NHWC tensor. A grid-stride loop over the
// flat index (the channel is index % C, so the bias read is a broadcast that stays in L1);
// the activation is a template parameter so the ReLU test is resolved at compile time.
#include "kernels/conv_epilogue.cuh"

#include <algorithm>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T, bool kRelu>
__global__ void conv_epilogue_kernel(T* __restrict__ y, const T* __restrict__ bias, const T* __restrict__ residual,
                                     int64_t n, int C) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = to_f32(y[i]) + to_f32(bias[i % C]);
    if (residual) v += to_f32(residual[i]);
    y[i] = from_f32<T>(kRelu ? fmaxf(v, 0.f) : v);
  }
}

}  // namespace

void conv_epilogue_forward(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C,
                           ConvActivation act, cudaStream_t stream) {
  const int64_t n = rows * C;
  if (n == 0) return;
  const unsigned grid = grid_stride_blocks(n, kThreads);
  LAPTIME_DISPATCH_FLOAT(dtype, {
    auto* out = static_cast<scalar_t*>(y);
    const auto* b = static_cast<const scalar_t*>(bias);
    const auto* z = static_cast<const scalar_t*>(residual);
    if (act == ConvActivation::Relu)
      conv_epilogue_kernel<scalar_t, true><<<grid, kThreads, 0, stream>>>(out, b, z, n, C);
    else
      conv_epilogue_kernel<scalar_t, false><<<grid, kThreads, 0, stream>>>(out, b, z, n, C);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
