// laptime lab's residual-add ladders (kernels/lab/registry.cpp says what each step teaches):
//   residual            v1 one thread per element (here); v2 16-byte vectors (here);
//                       v3 two vectors in flight a thread: production, residual_forward
//   residual_layernorm  v1 residual v1 + layernorm v1; v2 residual v3 + layernorm v3;
//                       v3 fused, one warp per row: production, residual_layernorm_forward
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/lab/launch.cuh"
#include "kernels/layernorm.cuh"
#include "kernels/residual.cuh"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void add_scalar_kernel(T* out, const T* x, const T* __restrict__ r, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = from_f32<T>(to_f32(x[i]) + to_f32(r[i]));
}

// One 16-byte vector a thread; the thread of the last, partial vector adds its elements one by one.
template <class T>
__global__ void add_vec_kernel(T* out, const T* x, const T* __restrict__ r, int64_t n) {
  constexpr int kVec = 16 / sizeof(T);
  const int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t first = v * kVec;
  if (first >= n) return;
  if (first + kVec <= n) {
    uint4 a = reinterpret_cast<const uint4*>(x)[v];
    const uint4 b = reinterpret_cast<const uint4*>(r)[v];
    T* ea = reinterpret_cast<T*>(&a);
    const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) ea[k] = from_f32<T>(to_f32(ea[k]) + to_f32(eb[k]));
    reinterpret_cast<uint4*>(out)[v] = a;
  } else {
    for (int64_t i = first; i < n; ++i) out[i] = from_f32<T>(to_f32(x[i]) + to_f32(r[i]));
  }
}

void residual_v1(const ResidualArgs& a, cudaStream_t stream) {
  if (a.n == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, add_scalar_kernel<scalar_t><<<ceil_div(a.n, kThreads), kThreads, 0, stream>>>(
                                      static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.x),
                                      static_cast<const scalar_t*>(a.r), a.n));
  CUDA_CHECK_LAUNCH();
}

// Falls back to v1 for pointers that are not 16-byte aligned (cudaMalloc's always are).
void residual_v2(const ResidualArgs& a, cudaStream_t stream) {
  if ((reinterpret_cast<uintptr_t>(a.out) | reinterpret_cast<uintptr_t>(a.x) | reinterpret_cast<uintptr_t>(a.r)) % 16)
    return residual_v1(a, stream);
  if (a.n == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, {
    constexpr int kVec = 16 / sizeof(scalar_t);
    add_vec_kernel<scalar_t><<<ceil_div((a.n + kVec - 1) / kVec, kThreads), kThreads, 0, stream>>>(
        static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.x), static_cast<const scalar_t*>(a.r), a.n);
  });
  CUDA_CHECK_LAUNCH();
}

void residual_v3(const ResidualArgs& a, cudaStream_t stream) {
  residual_forward(a.dtype, a.out, a.x, a.r, a.n, stream);
}

ResidualArgs add_of(const ResidualLayerNormArgs& a) {
  return {a.x_out, a.x, a.r, static_cast<int64_t>(a.rows) * a.C, a.dtype};
}
LayerNormArgs norm_of(const ResidualLayerNormArgs& a) {
  return {a.y, a.x_out, a.weight, a.bias, a.rows, a.C, a.eps, a.dtype};
}

void residual_layernorm_v1(const ResidualLayerNormArgs& a, cudaStream_t stream) {
  residual_v1(add_of(a), stream);
  layernorm_version(0)(norm_of(a), stream);
}

void residual_layernorm_v2(const ResidualLayerNormArgs& a, cudaStream_t stream) {
  residual_v3(add_of(a), stream);
  layernorm_version(5)(norm_of(a), stream);  // layernorm v6, production
}

void residual_layernorm_v3(const ResidualLayerNormArgs& a, cudaStream_t stream) {
  residual_layernorm_forward(a.dtype, a.x_out, a.y, a.x, a.r, a.weight, a.bias, a.rows, a.C, a.eps, stream);
}

}  // namespace

ResidualLaunch residual_version(int index) {
  static constexpr LaunchFn<ResidualArgs> kVersions[] = {residual_v1, residual_v2, residual_v3};
  return version_at(kVersions, index);
}

ResidualLayerNormLaunch residual_layernorm_version(int index) {
  static constexpr LaunchFn<ResidualLayerNormArgs> kVersions[] = {residual_layernorm_v1, residual_layernorm_v2,
                                                                  residual_layernorm_v3};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
