// laptime lab's bias + GELU ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  a bias kernel, then a GELU kernel, one thread per element, the tanh form (here)
//   v2  the two fused, one thread per element, the tanh form (here)
//   v3  fused, the exp form (here)
//   v4  fused, the exp form, 16-byte vectors, grid-stride: production, bias_gelu_forward
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/gelu.cuh"
#include "kernels/gelu_math.cuh"
#include "kernels/lab/launch.cuh"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void bias_add_kernel(T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ bias, int64_t n,
                                int C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = from_f32<T>(to_f32(in[i]) + to_f32(bias[i % C]));
}

template <class T>
__global__ void gelu_tanh_kernel(T* __restrict__ y, int64_t n) {  // in place
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = from_f32<T>(gelu_tanh_form(to_f32(y[i])));
}

template <class T, bool kExpForm>
__global__ void bias_gelu_kernel(T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ bias, int64_t n,
                                 int C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float x = to_f32(in[i]) + to_f32(bias[i % C]);
  out[i] = from_f32<T>(kExpForm ? gelu(x) : gelu_tanh_form(x));
}

int64_t elements(const BiasGeluArgs& a) { return static_cast<int64_t>(a.rows) * a.C; }

void v1(const BiasGeluArgs& a, cudaStream_t stream) {
  const int64_t n = elements(a);
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, {
    auto* y = static_cast<scalar_t*>(a.out);
    bias_add_kernel<scalar_t><<<ceil_div(n, kThreads), kThreads, 0, stream>>>(
        y, static_cast<const scalar_t*>(a.in), static_cast<const scalar_t*>(a.bias), n, a.C);
    gelu_tanh_kernel<scalar_t><<<ceil_div(n, kThreads), kThreads, 0, stream>>>(y, n);
  });
  CUDA_CHECK_LAUNCH();
}

template <bool kExpForm>
void fused(const BiasGeluArgs& a, cudaStream_t stream) {
  const int64_t n = elements(a);
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, bias_gelu_kernel<scalar_t, kExpForm><<<ceil_div(n, kThreads), kThreads, 0, stream>>>(
                                      static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.in),
                                      static_cast<const scalar_t*>(a.bias), n, a.C));
  CUDA_CHECK_LAUNCH();
}

void v4(const BiasGeluArgs& a, cudaStream_t stream) {
  bias_gelu_forward(a.dtype, a.out, a.in, a.bias, a.rows, a.C, stream);
}

}  // namespace

BiasGeluLaunch bias_gelu_version(int index) {
  static constexpr LaunchFn<BiasGeluArgs> kVersions[] = {v1, fused<false>, fused<true>, v4};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
