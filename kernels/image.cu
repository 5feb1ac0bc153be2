// NCHW fp32 → NHWC in the storage type, channels zero-padded to C_out. One thread per output
// element, channel fastest: stores are coalesced; loads stride by H·W, but with C = 3 a
// warp's 32 threads touch about 32 / C_out pixels of each of 3 planes — contiguous runs that
// the cache lines cover. It runs once per upload, outside the timed forward pass.
#include "kernels/image.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void nchw_to_nhwc_kernel(T* __restrict__ out, const float* __restrict__ in, int N, int C, int H, int W,
                                    int C_out) {
  const int64_t total = static_cast<int64_t>(N) * H * W * C_out;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // index into out
  if (i >= total) return;
  const int64_t c = i % C_out, p = (i / C_out) % (static_cast<int64_t>(H) * W),
                n = i / (static_cast<int64_t>(C_out) * H * W);
  out[i] = from_f32<T>(c < C ? in[(n * C + c) * H * W + p] : 0.f);
}

}  // namespace

void nchw_f32_to_nhwc(DType dtype, void* out, const float* in, int N, int C, int H, int W, int C_out,
                      cudaStream_t stream) {
  require(C_out >= C, "internal: nchw_f32_to_nhwc cannot fit " + std::to_string(C) + " channels in " +
                          std::to_string(C_out) + ".");
  const int64_t total = static_cast<int64_t>(N) * H * W * C_out;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, nchw_to_nhwc_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), in, N, C, H, W, C_out));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
