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
