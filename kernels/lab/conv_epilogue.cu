// laptime lab's convolution-epilogue ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  three passes, bias, residual, ReLU, one thread per element each (here)
//   v2  one fused pass, grid-stride: kernels/conv_epilogue.cu's general kernel
//   v3  fused, 16-byte vectors: production, conv_epilogue_forward
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/conv_epilogue.cuh"
#include "kernels/lab/launch.cuh"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void add_bias_kernel(T* __restrict__ y, const T* __restrict__ bias, int64_t n, int C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = from_f32<T>(to_f32(y[i]) + to_f32(bias[i % C]));
}

template <class T>
__global__ void add_residual_kernel(T* __restrict__ y, const T* __restrict__ residual, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = from_f32<T>(to_f32(y[i]) + to_f32(residual[i]));
}

template <class T>
__global__ void relu_kernel(T* __restrict__ y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = from_f32<T>(fmaxf(to_f32(y[i]), 0.f));
}

void v1(const ConvEpilogueArgs& a, cudaStream_t stream) {
  const int64_t n = a.rows * a.C;
  if (n == 0) return;
  const unsigned blocks = ceil_div(n, kThreads);
  LAPTIME_DISPATCH_FLOAT(a.dtype, {
    auto* y = static_cast<scalar_t*>(a.y);
    add_bias_kernel<scalar_t><<<blocks, kThreads, 0, stream>>>(y, static_cast<const scalar_t*>(a.bias), n, a.C);
    if (a.residual)
      add_residual_kernel<scalar_t><<<blocks, kThreads, 0, stream>>>(y, static_cast<const scalar_t*>(a.residual), n);
    if (a.relu) relu_kernel<scalar_t><<<blocks, kThreads, 0, stream>>>(y, n);
  });
  CUDA_CHECK_LAUNCH();
}

ConvActivation activation(const ConvEpilogueArgs& a) { return a.relu ? ConvActivation::Relu : ConvActivation::None; }

void v2(const ConvEpilogueArgs& a, cudaStream_t stream) {
  conv_epilogue_forward_general(a.dtype, a.y, a.bias, a.residual, a.rows, a.C, activation(a), stream);
}

void v3(const ConvEpilogueArgs& a, cudaStream_t stream) {
  conv_epilogue_forward(a.dtype, a.y, a.bias, a.residual, a.rows, a.C, activation(a), stream);
}

}  // namespace

ConvEpilogueLaunch conv_epilogue_version(int index) {
  static constexpr LaunchFn<ConvEpilogueArgs> kVersions[] = {v1, v2, v3};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
