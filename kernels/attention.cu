// Attention helpers: head split/merge (pure permutations) and the causal softmax.
//
// Softmax: one warp per score row. A row is at most n_ctx = 1024 floats, so 32 lanes
// stride it and every reduction is a warp shuffle. Three passes over the row (max, sum of
// exponentials, normalise); passes two and three hit L1. Statistics are fp32 in every
// precision, and the max is subtracted before exponentiating so large scores cannot overflow.
#include "kernels/attention.cuh"

#include <cuda_fp16.h>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kRowsPerBlock = 8;

// One thread per element of one of q/k/v; consecutive threads walk hd so reads and writes
// are both contiguous within a head.
template <class T>
__global__ void split_qkv_kernel(T* __restrict__ q, T* __restrict__ k, T* __restrict__ v, const T* __restrict__ qkv,
                                 int B, int T_, int H, int hd) {
  const int64_t C = static_cast<int64_t>(H) * hd;
  const int64_t n = static_cast<int64_t>(B) * T_ * C;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < n;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // idx enumerates the destination [B, H, T, hd].
    const int d = idx % hd;
    const int t = (idx / hd) % T_;
    const int h = (idx / (static_cast<int64_t>(hd) * T_)) % H;
    const int64_t b = idx / (static_cast<int64_t>(hd) * T_ * H);
    const T* src = qkv + (b * T_ + t) * 3 * C + static_cast<int64_t>(h) * hd + d;
    q[idx] = src[0];
    k[idx] = src[C];
    v[idx] = src[2 * C];
  }
}

template <class T>
__global__ void merge_heads_kernel(T* __restrict__ out, const T* __restrict__ heads, int B, int T_, int H, int hd) {
  const int64_t C = static_cast<int64_t>(H) * hd;
  const int64_t n = static_cast<int64_t>(B) * T_ * C;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < n;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // idx enumerates the destination [B, T, H, hd].
    const int d = idx % hd;
    const int h = (idx / hd) % H;
    const int t = (idx / C) % T_;
    const int64_t b = idx / (C * T_);
    out[idx] = heads[((b * H + h) * T_ + t) * hd + d];
  }
}

template <class T>
__global__ void causal_softmax_kernel(T* __restrict__ probs, const float* __restrict__ scores, int64_t rows, int T_) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int i = row % T_;  // query position: keys 0..i are visible
  const float* s = scores + row * T_;
  T* p = probs + row * T_;

  float m = -INFINITY;
  for (int j = lane; j <= i; j += 32) m = fmaxf(m, s[j]);
  m = warp_max(m);

  float sum = 0.f;
  for (int j = lane; j <= i; j += 32) sum += __expf(s[j] - m);
  const float inv = 1.f / warp_sum(sum);

  for (int j = lane; j < T_; j += 32) p[j] = from_f32<T>(j <= i ? __expf(s[j] - m) * inv : 0.f);
}

// Four elements per thread per step with 16-byte fp32 accesses where the pointers allow,
// else one element per step.
__global__ void f32_to_f16_kernel(__half* __restrict__ dst, const float* __restrict__ src, int64_t n, bool vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t n4 = vec ? n / 4 : 0;
  for (int64_t i = first; i < n4; i += stride) {
    const float4 v = reinterpret_cast<const float4*>(src)[i];
    reinterpret_cast<__half2*>(dst)[2 * i] = __floats2half2_rn(v.x, v.y);
    reinterpret_cast<__half2*>(dst)[2 * i + 1] = __floats2half2_rn(v.z, v.w);
  }
  for (int64_t i = n4 * 4 + first; i < n; i += stride) dst[i] = __float2half_rn(src[i]);
}

__global__ void f16_to_f32_kernel(float* __restrict__ dst, const __half* __restrict__ src, int64_t n, bool vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t n4 = vec ? n / 4 : 0;
  for (int64_t i = first; i < n4; i += stride) {
    const float2 a = __half22float2(reinterpret_cast<const __half2*>(src)[2 * i]);
    const float2 b = __half22float2(reinterpret_cast<const __half2*>(src)[2 * i + 1]);
    reinterpret_cast<float4*>(dst)[i] = make_float4(a.x, a.y, b.x, b.y);
  }
  for (int64_t i = n4 * 4 + first; i < n; i += stride) dst[i] = __half2float(src[i]);
}

}  // namespace

void convert_f32_to_f16(void* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const bool vec = (reinterpret_cast<uintptr_t>(dst) % 8 == 0) && (reinterpret_cast<uintptr_t>(src) % 16 == 0);
  f32_to_f16_kernel<<<grid_stride_blocks(vec ? n / 4 + 1 : n, 256), 256, 0, stream>>>(static_cast<__half*>(dst), src, n,
                                                                                      vec);
  CUDA_CHECK_LAUNCH();
}

void convert_f16_to_f32(float* dst, const void* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const bool vec = (reinterpret_cast<uintptr_t>(src) % 8 == 0) && (reinterpret_cast<uintptr_t>(dst) % 16 == 0);
  f16_to_f32_kernel<<<grid_stride_blocks(vec ? n / 4 + 1 : n, 256), 256, 0, stream>>>(
      dst, static_cast<const __half*>(src), n, vec);
  CUDA_CHECK_LAUNCH();
}

void split_qkv_heads(DType dtype, void* q, void* k, void* v, const void* qkv, int B, int T, int H, int hd,
                     cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(B) * T * H * hd;
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, split_qkv_kernel<scalar_t><<<grid_stride_blocks(n, 256), 256, 0, stream>>>(
                                    static_cast<scalar_t*>(q), static_cast<scalar_t*>(k), static_cast<scalar_t*>(v),
                                    static_cast<const scalar_t*>(qkv), B, T, H, hd));
  CUDA_CHECK_LAUNCH();
}

void causal_softmax(DType dtype, void* probs, const float* scores, int BH, int T, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(BH) * T;
  if (rows == 0) return;
  LAPTIME_DISPATCH_FLOAT(
      dtype, causal_softmax_kernel<scalar_t><<<ceil_div(rows, kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
                 static_cast<scalar_t*>(probs), scores, rows, T));
  CUDA_CHECK_LAUNCH();
}

void merge_heads(DType dtype, void* out, const void* heads, int B, int T, int H, int hd, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(B) * T * H * hd;
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, merge_heads_kernel<scalar_t><<<grid_stride_blocks(n, 256), 256, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(heads), B, T, H, hd));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
