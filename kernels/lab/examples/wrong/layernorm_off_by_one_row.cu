// WRONG ON PURPOSE: layernorm with an off-by-one row, a test input for `laptime lab layernorm --try`.
// The bound is `row > rows` where it must be `row >= rows`: the thread of row `rows` (there is one
// whenever rows is not a multiple of the block) reads and writes one row past the end. The lab
// finds the write in the guard after the output ("wrote past the end of an output: element 1 (it
// has 1 element)") at its odd shapes, and the rung is FAILED, never timed. At GPT-2's 8192 rows
// no thread has that row: only a check at an awkward shape catches it.

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
  if (row > rows) return;  // the bug: row == rows goes on
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
  for (int c = 0; c < C; ++c)
    y[c] = to_scalar((to_float(x[c]) - mean) * rstd * to_float(weight[c]) + to_float(bias[c]));
}

__device__ LaunchShape layernorm_launch(int rows, int C, int sms) {
  LaunchShape s;
  s.block = dim3(256);
  s.grid = dim3(ceil_div(rows, 256));
  s.shared_bytes = 0;
  return s;
}
