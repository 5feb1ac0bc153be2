// LayerNorm forward.
//
// One warp per row: C is a few hundred to a few thousand, so a warp's 32 lanes stride the
// row, the reductions stay inside the warp (shuffles, no shared memory, no block barrier),
// and 8 rows per 256-thread block keep enough warps in flight to hide memory latency.
// The row is read three times (mean, variance, output); the second and third reads hit L1
// for rows of the sizes GPT-2 uses. Variance is computed around the mean (two-pass), not as
// E[x²] - mean², which cancels catastrophically in fp32 when |mean| >> std.
#include "kernels/layernorm.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kWarpsPerBlock = 8;

template <class T>
__global__ void layernorm_kernel(T* __restrict__ out, const T* __restrict__ in,
                                 const T* __restrict__ weight, const T* __restrict__ bias, int rows,
                                 int C, float eps) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* x = in + static_cast<size_t>(row) * C;
  T* y = out + static_cast<size_t>(row) * C;

  float sum = 0.f;
  for (int c = lane; c < C; c += 32) sum += to_f32(x[c]);
  const float mean = warp_sum(sum) / C;

  float sq = 0.f;
  for (int c = lane; c < C; c += 32) {
    const float d = to_f32(x[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(warp_sum(sq) / C + eps);

  for (int c = lane; c < C; c += 32) {
    const float n = (to_f32(x[c]) - mean) * rstd;
    y[c] = from_f32<T>(n * to_f32(weight[c]) + to_f32(bias[c]));
  }
}

}  // namespace

void layernorm_forward(DType dtype, void* out, const void* in, const void* weight, const void* bias,
                       int rows, int C, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, layernorm_kernel<scalar_t><<<ceil_div(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
                                    static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), static_cast<const scalar_t*>(weight),
                                    static_cast<const scalar_t*>(bias), rows, C, eps));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
