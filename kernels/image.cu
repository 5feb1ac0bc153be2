// NCHW fp32 → NHWC in the storage type, channels zero-padded to C_out. One thread per output
// element, channel fastest: stores are coalesced; loads stride by H·W, but with C = 3 a
// warp's 32 threads touch about 32 / C_out pixels of each of 3 planes — contiguous runs that
// the cache lines cover. It runs once per upload, outside the timed forward pass.
// nchw_f32_to_s2d does the same for the stem's space-to-depth input (layers/resnet50/space_to_depth.h).
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

// One thread per output element, channel fastest (coalesced stores); as above, runs once per upload.
template <class T>
__global__ void nchw_to_s2d_kernel(T* __restrict__ out, const float* __restrict__ in, int N, int C, int H, int W,
                                   int pad, int Hs, int Ws, int C_out) {
  const int64_t total = static_cast<int64_t>(N) * Hs * Ws * C_out;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const int ch = static_cast<int>(i % C_out);
  const int64_t px = i / C_out;
  const int j = static_cast<int>(px % Ws), r = static_cast<int>((px / Ws) % Hs);
  const int64_t n = px / (static_cast<int64_t>(Ws) * Hs);
  float v = 0.f;
  if (ch < 4 * C) {
    const int sub = ch / C, c = ch % C;  // sub = 2·dy + dx
    const int h = 2 * r + sub / 2 - pad, w = 2 * j + sub % 2 - pad;
    if (h >= 0 && h < H && w >= 0 && w < W) v = in[((n * C + c) * H + h) * W + w];
  }
  out[i] = from_f32<T>(v);
}

}  // namespace

void nchw_f32_to_s2d(DType dtype, void* out, const float* in, int N, int C, int H, int W, int pad, int Hs, int Ws,
                     int C_out, cudaStream_t stream) {
  require(C_out >= 4 * C, "internal: nchw_f32_to_s2d cannot fit " + std::to_string(4 * C) + " channels in " +
                              std::to_string(C_out) + ".");
  const int64_t total = static_cast<int64_t>(N) * Hs * Ws * C_out;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, nchw_to_s2d_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), in, N, C, H, W, pad, Hs, Ws, C_out));
  CUDA_CHECK_LAUNCH();
}

void nchw_f32_to_nhwc(DType dtype, void* out, const float* in, int N, int C, int H, int W, int C_out,
                      cudaStream_t stream) {
  require(C_out >= C,
          "internal: nchw_f32_to_nhwc cannot fit " + std::to_string(C) + " channels in " + std::to_string(C_out) + ".");
  const int64_t total = static_cast<int64_t>(N) * H * W * C_out;
  if (total == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, nchw_to_nhwc_kernel<scalar_t><<<ceil_div(total, kThreads), kThreads, 0, stream>>>(
                                    static_cast<scalar_t*>(out), in, N, C, H, W, C_out));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
