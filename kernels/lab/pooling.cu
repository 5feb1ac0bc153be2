// laptime lab's max-pool ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  one output element a thread: kernels/pooling.cu's general kernel
//   v2  16-byte vectors, one output pixel's channel group a thread (here)
//   v3  16-byte vectors, two outputs a thread: production, maxpool3x3s2_forward
// v2, like production, runs the general kernel where C is not a whole number of vectors.
// And the global average pool's: v1 one output element a thread (global_avgpool_forward_general),
// v2 16-byte vectors, one thread an output vector walking every pixel (here), v3 16-byte vectors
// with the pixels split over a block's warps (production, global_avgpool_forward).
#include <cfloat>
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/lab/launch.cuh"
#include "kernels/pooling.cuh"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void maxpool_vec_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int H, int W, int C, int Ho,
                                   int Wo) {
  constexpr int kVec = 16 / sizeof(T);
  const int groups = C / kVec;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(N) * Ho * Wo * groups) return;
  const int cg = static_cast<int>(i % groups);
  int64_t r = i / groups;
  const int wo = static_cast<int>(r % Wo);
  r /= Wo;
  const int ho = static_cast<int>(r % Ho);
  const int64_t n = r / Ho;
  float m[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) m[k] = -FLT_MAX;
  for (int h = max(2 * ho - 1, 0); h < min(2 * ho + 2, H); ++h)
    for (int w = max(2 * wo - 1, 0); w < min(2 * wo + 2, W); ++w) {  // the window clipped to the image
      const uint4 raw = *reinterpret_cast<const uint4*>(in + ((n * H + h) * W + w) * C + cg * kVec);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m[k] = fmaxf(m[k], to_f32(e[k]));
    }
  uint4 res;
  T* o = reinterpret_cast<T*>(&res);
#pragma unroll
  for (int k = 0; k < kVec; ++k) o[k] = from_f32<T>(m[k]);
  *reinterpret_cast<uint4*>(out + ((n * Ho + ho) * Wo + wo) * C + cg * kVec) = res;
}

void v1(const MaxPoolArgs& a, cudaStream_t stream) {
  maxpool3x3s2_forward_general(a.dtype, a.out, a.in, a.N, a.H, a.W, a.C, stream);
}

void v2(const MaxPoolArgs& a, cudaStream_t stream) {
  const int Ho = pool_out_size(a.H, 3, 2, 1), Wo = pool_out_size(a.W, 3, 2, 1);
  const bool aligned = (reinterpret_cast<uintptr_t>(a.out) | reinterpret_cast<uintptr_t>(a.in)) % 16 == 0;
  const int vec = 16 / static_cast<int>(dtype_size(a.dtype));
  if (!aligned || a.C % vec != 0) return v1(a, stream);
  const int64_t threads = static_cast<int64_t>(a.N) * Ho * Wo * (a.C / vec);
  if (threads == 0) return;
  LAPTIME_DISPATCH_FLOAT(
      a.dtype, maxpool_vec_kernel<scalar_t><<<ceil_div(threads, kThreads), kThreads, 0, stream>>>(
                   static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.in), a.N, a.H, a.W, a.C, Ho, Wo));
  CUDA_CHECK_LAUNCH();
}

void v3(const MaxPoolArgs& a, cudaStream_t stream) {
  maxpool3x3s2_forward(a.dtype, a.out, a.in, a.N, a.H, a.W, a.C, stream);
}

}  // namespace

MaxPoolLaunch maxpool_version(int index) {
  static constexpr LaunchFn<MaxPoolArgs> kVersions[] = {v1, v2, v3};
  return version_at(kVersions, index);
}

namespace {
// One thread a (image, 16-byte vector of channels), its H·W loads in a row, fp32 sums.
template <class T>
__global__ void avgpool_vec_serial_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int HW, int C) {
  constexpr int kVec = 16 / sizeof(T);
  const int vecs = C / kVec;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // (n, vector)
  if (i >= static_cast<int64_t>(N) * vecs) return;
  const int64_t n = i / vecs;
  const int v = static_cast<int>(i - n * vecs);
  const uint4* x = reinterpret_cast<const uint4*>(in + n * HW * C) + v;
  float sum[kVec] = {};
  for (int p = 0; p < HW; ++p) {
    const uint4 raw = x[static_cast<int64_t>(p) * vecs];
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int k = 0; k < kVec; ++k) sum[k] += to_f32(e[k]);
  }
  uint4 res;
  T* o = reinterpret_cast<T*>(&res);
#pragma unroll
  for (int k = 0; k < kVec; ++k) o[k] = from_f32<T>(sum[k] / HW);
  reinterpret_cast<uint4*>(out + n * C)[v] = res;
}

void avg_v1(const AvgPoolArgs& a, cudaStream_t stream) {
  global_avgpool_forward_general(a.dtype, a.out, a.in, a.N, a.H, a.W, a.C, stream);
}
// Like production, the general kernel where C is not a whole number of vectors.
void avg_v2(const AvgPoolArgs& a, cudaStream_t stream) {
  const bool aligned = (reinterpret_cast<uintptr_t>(a.out) | reinterpret_cast<uintptr_t>(a.in)) % 16 == 0;
  const int vec = 16 / static_cast<int>(dtype_size(a.dtype));
  if (!aligned || a.C % vec != 0 || a.H * a.W == 0) return avg_v1(a, stream);
  const int64_t threads = static_cast<int64_t>(a.N) * (a.C / vec);
  if (threads == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype,
                         avgpool_vec_serial_kernel<scalar_t><<<ceil_div(threads, kThreads), kThreads, 0, stream>>>(
                             static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.in), a.N, a.H * a.W, a.C));
  CUDA_CHECK_LAUNCH();
}
void avg_v3(const AvgPoolArgs& a, cudaStream_t stream) {
  global_avgpool_forward(a.dtype, a.out, a.in, a.N, a.H, a.W, a.C, stream);
}
}  // namespace

AvgPoolLaunch avgpool_version(int index) {
  static constexpr LaunchFn<AvgPoolArgs> kVersions[] = {avg_v1, avg_v2, avg_v3};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
