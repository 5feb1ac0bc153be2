// Pooling kernels for ResNet's NHWC activations.
//
// Both are pure bandwidth: a max over 9 values or a mean over H·W per output. The channel index
// is fastest: neighbouring threads read neighbouring channels of the same pixel, and every load
// and store is coalesced without shared memory. Arithmetic is fp32 whatever the storage type.
// Max-pool moves 16 bytes per thread (8 bf16 or 4 fp32 channels) when C allows it: with
// one 2-byte element per thread the kernel was bound by index arithmetic and load count,
// not bandwidth (870 us for ResNet-50's B=256 bf16 stem on an H200). A thread then makes two
// horizontally adjacent outputs, whose windows share a column (maxpool3x3s2_pair_kernel).
// The global average pool, likewise, reads 16 bytes a thread where C allows it; its 2048 x 49 mean
// at ResNet-50's B256 is split over the 8 warps of a block by pixel and summed once in shared
// memory (global_avgpool_vec_kernel), where one thread walking all 49 pixels of one channel
// (the general kernel) kept too few loads in flight: 22 us for 51 MB, 56% of the copy roof.
#include "kernels/pooling.cuh"

#include <cfloat>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void maxpool3x3s2_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int H, int W, int C, int Ho,
                                    int Wo) {
  const int64_t total = static_cast<int64_t>(N) * Ho * Wo * C;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int c = static_cast<int>(i % C);
  int64_t r = i / C;
  const int wo = static_cast<int>(r % Wo);
  r /= Wo;
  const int ho = static_cast<int>(r % Ho);
  const int n = static_cast<int>(r / Ho);
  // Window rows 2·ho−1 .. 2·ho+1, clipped to the image: padding is "absent", not zero.
  const int h0 = max(2 * ho - 1, 0), h1 = min(2 * ho + 2, H);
  const int w0 = max(2 * wo - 1, 0), w1 = min(2 * wo + 2, W);
  float m = -FLT_MAX;
  for (int h = h0; h < h1; ++h)
    for (int w = w0; w < w1; ++w) m = fmaxf(m, to_f32(in[((static_cast<int64_t>(n) * H + h) * W + w) * C + c]));
  out[i] = from_f32<T>(m);
}

// Vector path, two outputs a thread: thread (n, ho, pair j, channel group) takes kVec consecutive
// channels of outputs wo = 2j and 2j + 1. Their windows share input column 4j + 1, so the two
// read 3 rows × 5 columns: 15 16-byte loads where one output a thread made 9 each. Window
// positions outside the image are clamped onto its edge: a clamped position repeats a pixel that
// is in the window already, so the max is the clipped window's, and the loads have no branch
// and no trip count between them (the one-output kernel looped over the clipped window).
template <class T>
__global__ void maxpool3x3s2_pair_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int H, int W, int C,
                                         int Ho, int Wo) {
  constexpr int kVec = 16 / sizeof(T);
  const int groups = C / kVec, pairs = (Wo + 1) / 2;
  const int64_t total = static_cast<int64_t>(N) * Ho * pairs * groups;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int cg = static_cast<int>(i % groups);
  int64_t r = i / groups;
  const int j = static_cast<int>(r % pairs);
  r /= pairs;
  const int ho = static_cast<int>(r % Ho);
  const int64_t n = r / Ho;
  int64_t row[3];
#pragma unroll
  for (int dh = 0; dh < 3; ++dh) row[dh] = (n * H + min(max(2 * ho - 1 + dh, 0), H - 1)) * W;
  int col[5];
#pragma unroll
  for (int dw = 0; dw < 5; ++dw) col[dw] = min(max(4 * j - 1 + dw, 0), W - 1);
  float m0[kVec], m1[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) m0[k] = m1[k] = -FLT_MAX;
#pragma unroll
  for (int dh = 0; dh < 3; ++dh)
#pragma unroll
    for (int dw = 0; dw < 5; ++dw) {
      const uint4 raw = *reinterpret_cast<const uint4*>(in + (row[dh] + col[dw]) * C + cg * kVec);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        if (dw <= 2) m0[k] = fmaxf(m0[k], to_f32(e[k]));  // output 2j: columns 4j − 1 .. 4j + 1
        if (dw >= 2) m1[k] = fmaxf(m1[k], to_f32(e[k]));  // output 2j + 1: columns 4j + 1 .. 4j + 3
      }
    }
  uint4 res0, res1;
  T* r0 = reinterpret_cast<T*>(&res0);
  T* r1 = reinterpret_cast<T*>(&res1);
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    r0[k] = from_f32<T>(m0[k]);
    r1[k] = from_f32<T>(m1[k]);
  }
  T* dst = out + ((n * Ho + ho) * Wo + 2 * j) * C + cg * kVec;
  *reinterpret_cast<uint4*>(dst) = res0;
  if (2 * j + 1 < Wo) *reinterpret_cast<uint4*>(dst + C) = res1;
}

template <class T>
__global__ void global_avgpool_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int HW, int C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // (n, c)
  if (i >= static_cast<int64_t>(N) * C) return;
  const int64_t n = i / C, c = i % C;
  const T* x = in + n * HW * C + c;
  float sum = 0.f;
  for (int p = 0; p < HW; ++p) sum += to_f32(x[static_cast<int64_t>(p) * C]);
  out[i] = from_f32<T>(sum / HW);
}

// One block a (image, 32 vectors of channels): lane l of warp w sums vector l over pixels w,
// w + 8, ... (each warp's load a contiguous 512 bytes in bf16), then warp 0 adds the eight
// partial sums from shared memory and stores the vector. 16-byte loads, fp32 sums.
constexpr int kAvgWarps = 8;

template <class T>
__global__ void __launch_bounds__(32 * kAvgWarps)
    global_avgpool_vec_kernel(T* __restrict__ out, const T* __restrict__ in, int HW, int C) {
  constexpr int kVec = 16 / sizeof(T);
  const int vecs = C / kVec;
  const int v = blockIdx.x * 32 + threadIdx.x;
  const int64_t n = blockIdx.y;
  float sum[kVec] = {};
  if (v < vecs) {
    const uint4* x = reinterpret_cast<const uint4*>(in + n * HW * C) + v;
#pragma unroll 4
    for (int p = threadIdx.y; p < HW; p += kAvgWarps) {
      const uint4 raw = __ldg(x + static_cast<int64_t>(p) * vecs);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum[k] += to_f32(e[k]);
    }
  }
  __shared__ float part[kAvgWarps][kVec][32];  // lanes fastest: no bank conflicts
#pragma unroll
  for (int k = 0; k < kVec; ++k) part[threadIdx.y][k][threadIdx.x] = sum[k];
  __syncthreads();
  if (threadIdx.y != 0 || v >= vecs) return;
  const float inv = 1.f / HW;
  uint4 res;
  T* o = reinterpret_cast<T*>(&res);
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kAvgWarps; ++w) s += part[w][k][threadIdx.x];
    o[k] = from_f32<T>(s * inv);
  }
  reinterpret_cast<uint4*>(out + n * C)[v] = res;
}

__global__ void global_avgpool_e4m3_kernel(__nv_bfloat16* __restrict__ out, const __nv_fp8_e4m3* __restrict__ in,
                                           const float* __restrict__ scale, int N, int HW, int C) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // (n, c)
  if (i >= static_cast<int64_t>(N) * C) return;
  const int64_t n = i / C, c = i % C;
  const __nv_fp8_e4m3* x = in + n * HW * C + c;
  float sum = 0.f;
  for (int p = 0; p < HW; ++p) sum += to_f32(x[static_cast<int64_t>(p) * C]);
  out[i] = __float2bfloat16_rn(*scale * (sum / HW));
}

enum class Path { Auto, General };

void maxpool(DType dtype, void* out, const void* in, int N, int H, int W, int C, Path path, cudaStream_t stream) {
  const int Ho = pool_out_size(H, 3, 2, 1), Wo = pool_out_size(W, 3, 2, 1);
  const int64_t total = static_cast<int64_t>(N) * Ho * Wo * C;
  if (total == 0) return;
  const bool aligned = (reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in)) % 16 == 0;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    constexpr int kVec = 16 / sizeof(scalar_t);
    auto* y = static_cast<scalar_t*>(out);
    const auto* x = static_cast<const scalar_t*>(in);
    if (path == Path::Auto && aligned && C % kVec == 0) {
      const int64_t threads = static_cast<int64_t>(N) * Ho * ((Wo + 1) / 2) * (C / kVec);
      maxpool3x3s2_pair_kernel<scalar_t>
          <<<ceil_div(threads, kThreads), kThreads, 0, stream>>>(y, x, N, H, W, C, Ho, Wo);
    } else {
      maxpool3x3s2_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(y, x, N, H, W, C, Ho, Wo);
    }
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void maxpool3x3s2_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream) {
  maxpool(dtype, out, in, N, H, W, C, Path::Auto, stream);
}

void maxpool3x3s2_forward_general(DType dtype, void* out, const void* in, int N, int H, int W, int C,
                                  cudaStream_t stream) {
  maxpool(dtype, out, in, N, H, W, C, Path::General, stream);
}

void global_avgpool_forward_general(DType dtype, void* out, const void* in, int N, int H, int W, int C,
                                    cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(N) * C;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, global_avgpool_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), N, H * W, C));
  CUDA_CHECK_LAUNCH();
}

void global_avgpool_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream) {
  const int vec = 16 / static_cast<int>(dtype_size(dtype));
  const bool aligned = (reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in)) % 16 == 0;
  if (!aligned || C % vec != 0 || N > 65535 || H * W == 0)
    return global_avgpool_forward_general(dtype, out, in, N, H, W, C, stream);
  if (N == 0 || C == 0) return;
  const dim3 grid(static_cast<unsigned>(ceil_div(C / vec, 32)), static_cast<unsigned>(N));
  const dim3 block(32, kAvgWarps);
  LAPTIME_DISPATCH_FLOAT(dtype, global_avgpool_vec_kernel<scalar_t><<<grid, block, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), H * W, C));
  CUDA_CHECK_LAUNCH();
}

void global_avgpool_e4m3_forward(void* out, const void* in, const float* scale, int N, int H, int W, int C,
                                 cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(N) * C;
  if (total == 0) return;
  global_avgpool_e4m3_kernel<<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(out), static_cast<const __nv_fp8_e4m3*>(in), scale, N, H * W, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
