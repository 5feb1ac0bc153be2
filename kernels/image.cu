// NCHW fp32 → NHWC in the storage type. One thread per output element, channel fastest:
// stores are coalesced; loads stride by H·W, but with C = 3 a warp's 32 threads touch
// about 11 pixels of each of 3 planes — contiguous runs that the cache lines cover.
// It runs once per upload, outside the timed forward pass.
#include "kernels/image.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void nchw_to_nhwc_kernel(T* __restrict__ out, const float* __restrict__ in, int N, int C, int H, int W) {
  const int64_t total = static_cast<int64_t>(N) * C * H * W;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // index into out
  if (i >= total) return;
  const int64_t c = i % C, p = (i / C) % (static_cast<int64_t>(H) * W), n = i / (static_cast<int64_t>(C) * H * W);
  out[i] = from_f32<T>(in[(n * C + c) * H * W + p]);
}

}  // namespace

void nchw_f32_to_nhwc(DType dtype, void* out, const float* in, int N, int C, int H, int W, cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(N) * C * H * W;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, nchw_to_nhwc_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), in, N, C, H, W));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
