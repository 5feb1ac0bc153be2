// WRONG ON PURPOSE: layernorm with a race, a test input for `laptime lab layernorm --try` (and
// for `compute-sanitizer --tool racecheck`). A block a row; every thread adds its part of the row
// into one shared float with `+=`, which is a read, an add and a write, not one step: the 32 lanes
// of a warp read the same old value and one write wins, and the warps overwrite each other. The
// mean and the variance are wrong by far (an atomicAdd, or a reduction with __syncthreads between
// its steps, is the fix), and the rung is FAILED with its worst element, never timed.

// ---- the lab's convention, the same in every template: keep it ---------------------------
#include <cuda_bf16.h>
#include <cuda_fp8.h>

// The lab compiles this file once per precision, with LAPTIME_FP32 (`-p fp32`) or LAPTIME_BF16
// (`-p bf16`, and fp8's kernels, whose data is bf16) defined.
#if defined(LAPTIME_FP32)
typedef float scalar_t;
#else
typedef __nv_bfloat16 scalar_t;
#endif

// Arithmetic in float, one rounding when a value is stored.
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ scalar_t to_scalar(float x) { return scalar_t(x); }

// What a launch function returns: the grid, the block and the dynamic shared memory (bytes) of
// one call. The lab runs the launch function on the GPU once per shape, then launches the kernel
// with it; above 48 KiB of shared memory it raises the kernel's limit first.
struct LaunchShape {
  dim3 grid;
  dim3 block;
  unsigned shared_bytes;
};

__device__ __forceinline__ unsigned ceil_div(long long a, long long b) { return unsigned((a + b - 1) / b); }
// ---- end of the convention ------------------------------------------------------------------

extern "C" __global__ void layernorm(scalar_t* out, const scalar_t* in, const scalar_t* weight, const scalar_t* bias,
                                     int rows, int C, float eps) {
  __shared__ float sum, sq;
  const long long row = blockIdx.x;
  const scalar_t* x = in + row * C;
  scalar_t* y = out + row * C;
  if (threadIdx.x == 0) sum = sq = 0.f;
  __syncthreads();
  float part = 0.f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) part += to_float(x[c]);
  sum += part;  // the race: many threads' read-add-write of one address
  __syncthreads();
  const float mean = sum / C;
  part = 0.f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    const float d = to_float(x[c]) - mean;
    part += d * d;
  }
  sq += part;  // the same race
  __syncthreads();
  const float rstd = rsqrtf(sq / C + eps);
  for (int c = threadIdx.x; c < C; c += blockDim.x)
    y[c] = to_scalar((to_float(x[c]) - mean) * rstd * to_float(weight[c]) + to_float(bias[c]));
}

__device__ LaunchShape layernorm_launch(int rows, int C, int sms) {
  LaunchShape s;
  s.block = dim3(256);
  s.grid = dim3(rows);
  s.shared_bytes = 0;
  return s;
}
