// WRONG ON PURPOSE: layernorm with an unwritten tail, a test input for `laptime lab layernorm --try`.
// The output is written 8 elements at a time (as a vectorised kernel would store 16 bytes) with
// no loop for the last C % 8: at C = 771 the last 3 elements of every row keep the NaN the lab
// poisoned them with ("output [0, 768] is NaN (never written, or not finite)"), and the rung is
// FAILED, never timed. GPT-2's C = 768 is a multiple of 8: only a check at an odd width catches it.

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
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const scalar_t* x = in + row * C;
  scalar_t* y = out + row * C;
  double sum = 0;
  for (int c = 0; c < C; ++c) sum += to_float(x[c]);
  const float mean = float(sum / C);
  double sq = 0;
  for (int c = 0; c < C; ++c) {
    const float d = to_float(x[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(float(sq / C) + eps);
  for (int c = 0; c + 8 <= C; c += 8)  // the bug: no tail loop for the last C % 8 elements
    for (int k = 0; k < 8; ++k)
      y[c + k] = to_scalar((to_float(x[c + k]) - mean) * rstd * to_float(weight[c + k]) + to_float(bias[c + k]));
}

__device__ LaunchShape layernorm_launch(int rows, int C, int sms) {
  LaunchShape s;
  s.block = dim3(256);
  s.grid = dim3(ceil_div(rows, 256));
  s.shared_bytes = 0;
  return s;
}
