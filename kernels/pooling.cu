// Pooling kernels for ResNet's NHWC activations.
//
// Both are pure bandwidth: a max over 9 values or a mean over H·W per output, nothing to
// reuse across threads. So one thread per output element with the channel index fastest:
// neighbouring threads read neighbouring channels of the same pixel, and every load and
// store is coalesced without shared memory. Arithmetic is fp32 whatever the storage type.
#include "kernels/pooling.cuh"

#include <cfloat>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void maxpool3x3s2_kernel(T* __restrict__ out, const T* __restrict__ in, int N, int H, int W, int C,
                                    int Ho, int Wo) {
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

}  // namespace

void maxpool3x3s2_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream) {
  const int Ho = pool_out_size(H, 3, 2, 1), Wo = pool_out_size(W, 3, 2, 1);
  const int64_t total = static_cast<int64_t>(N) * Ho * Wo * C;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, maxpool3x3s2_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), N, H, W, C, Ho, Wo));
  CUDA_CHECK_LAUNCH();
}

void global_avgpool_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(N) * C;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, global_avgpool_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), N, H * W, C));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
