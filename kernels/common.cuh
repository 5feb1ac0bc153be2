// Shared device helpers: element-type conversion and warp reductions. Kernels are written
// once as templates over the storage type T (float or __nv_bfloat16) and compute in fp32.
#pragma once

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <string>

#include "core/check.h"
#include "core/dtype.h"

namespace laptime {

template <class T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float to_f32<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) {
  return static_cast<float>(v);
}

template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
// e4m3: round to nearest even, saturating to ±448 (e4m3 has no infinity: a non-saturating
// conversion would turn an overflow into NaN). NaN stays NaN.
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_f32<__nv_fp8_e4m3>(float v) {
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  return r;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Two floats as one register of two bf16 (round to nearest): a fragment of mma.sync's and wgmma's A.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// cp.async's groups (sm_80+): close this thread's copies so far into one group; wait until at
// most N of its groups are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

inline unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

// Blocks for a grid-stride loop over n elements, `threads` per block: one element per thread
// up to a cap of 4224 blocks (32 per SM of an H100/H200), past which each thread loops.
// The cap only bounds launch size; any GPU runs any grid.
inline unsigned grid_stride_blocks(int64_t n, int threads) {
  constexpr int64_t kMaxBlocks = 132 * 32;
  return static_cast<unsigned>(std::min<int64_t>((n + threads - 1) / threads, kMaxBlocks));
}

}  // namespace laptime

// Runs the statement with `scalar_t` the storage type of `dtype` (F32 or BF16). Any other
// type (F16, I32, ...) throws Error naming it: no kernel here was written for it, and
// reading it as float would be silently wrong.
#define LAPTIME_DISPATCH_FLOAT(dtype, ...)                                                       \
  do {                                                                                           \
    const ::laptime::DType laptime_dt_ = (dtype);                                                \
    if (laptime_dt_ == ::laptime::DType::BF16) {                                                 \
      using scalar_t = __nv_bfloat16;                                                            \
      __VA_ARGS__;                                                                               \
    } else if (laptime_dt_ == ::laptime::DType::F32) {                                           \
      using scalar_t = float;                                                                    \
      __VA_ARGS__;                                                                               \
    } else {                                                                                     \
      throw ::laptime::Error(std::string("internal: ") + __func__ + " has no kernel for " +      \
                             ::laptime::dtype_name(laptime_dt_) + " data (only F32 and BF16)."); \
    }                                                                                            \
  } while (0)
