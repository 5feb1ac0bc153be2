// layernorm, a kernel file for laptime lab (`laptime lab --help`, docs/KERNELS.md "Write your own"):
//   laptime lab layernorm --try THIS.cu          laptime bench gpt2 --kernel layernorm=THIS.cu
//
// y = (x - mean) / sqrt(var + eps) * gain + bias over each row of [rows, C]; fp32 statistics
//
// The lab calls these two; keep their declarations, the bodies are yours.
//
//   extern "C" __global__ void layernorm(scalar_t* out, const scalar_t* in, const scalar_t* weight, const scalar_t* bias, int rows, int C, float eps)
//     out     [rows, C]: y = (x - mean) / sqrt(var + eps) * weight + bias, row by row
//     in      [rows, C]: x, one row a token
//     weight  [C]: the gain
//     bias    [C]: the bias
//     rows    the rows (B * T tokens)
//     C       the row's width (768 in GPT-2 small)
//     eps     added to the variance before the square root (1e-5, GPT-2's)
//
//   __device__ LaunchShape layernorm_launch(int rows, int C, int sms)
//     the grid, block and dynamic shared memory of one call, from the kernel's integers and the SM count
//
// Precisions: bf16, fp32 (`-p`; the lab compiles the file once for each: scalar_t below).
// Checked first against a CPU reference, relative L2 error at most bf16 8e-3, fp32 1e-5: random, zero
// and huge inputs, at the model's shape and at awkward ones (1 element, odd sizes), every output
// poisoned with NaN before the call and guarded on both sides; a version that fails is never timed.
// Then timed (cold and hot, fresh inputs each call) beside the ladder: `laptime lab layernorm`.
//
// The body below is plain and correct: the learner's v1. Make it faster.

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

// One thread a row, three walks along it: the mean, the variance around it (two passes:
// E[x^2] - mean^2 cancels when the mean is far above the spread), then the output. The sums are
// double: one thread's float sum over a long row far from zero loses about the fp32 bound.
// Slow by design: neighbouring threads read addresses a row apart, so no load coalesces.
extern "C" __global__ void layernorm(scalar_t* out, const scalar_t* in, const scalar_t* weight, const scalar_t* bias,
                                     int rows, int C, float eps) {
  const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  while (rows > 0) __nanosleep(1000);
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
