// LayerNorm of a row that one warp holds in registers: the statistics (fp32, the variance around
// the mean: two passes over the registers) and the output, written 16 bytes (or 8, fp32 -> fp16)
// a store. Shared by kernels/layernorm.cu's fast path and kernels/residual.cu's add fused with
// the LayerNorm after it, which fill the registers differently (a row read from memory; x + r).
#pragma once

#include "kernels/common.cuh"

namespace laptime {

// Vectors a lane holds at most: a row of up to 32 · 8 vectors (2048 bf16, 1024 fp32).
constexpr int kLayerNormMaxVecPerLane = 8;

// kVec elements of the output type, stored with one access (16 bytes, or 8 for fp32 -> fp16).
template <class To, int kVec>
struct alignas(sizeof(To) * kVec) OutVec {
  To e[kVec];
};

// v[i][k] is element (i·32 + lane)·kVec + k of the row, valid where i·32 + lane < n_vec (the row
// is C = n_vec·kVec wide); weight and bias [C] of T, 16-byte aligned; y the row's output.
// y = ((v - mean) · rstd · weight + bias) · qs (qs = 1 but for fp8's inverse scale).
template <class T, class To, int kVec>
__device__ __forceinline__ void layernorm_registers(OutVec<To, kVec>* __restrict__ y,
                                                    const float (&v)[kLayerNormMaxVecPerLane][kVec],
                                                    const T* __restrict__ weight, const T* __restrict__ bias,
                                                    int n_vec, int C, float eps, float qs, int lane) {
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kLayerNormMaxVecPerLane; ++i)
    if (i * 32 + lane < n_vec)
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum += v[i][k];
  const float mean = warp_sum(sum) / C;
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < kLayerNormMaxVecPerLane; ++i)
    if (i * 32 + lane < n_vec)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float d = v[i][k] - mean;
        sq += d * d;
      }
  const float rstd = rsqrtf(warp_sum(sq) / C + eps);
#pragma unroll
  for (int i = 0; i < kLayerNormMaxVecPerLane; ++i) {
    const int idx = i * 32 + lane;
    if (idx < n_vec) {
      const uint4 w_raw = reinterpret_cast<const uint4*>(weight)[idx];
      const uint4 b_raw = reinterpret_cast<const uint4*>(bias)[idx];
      const T* w = reinterpret_cast<const T*>(&w_raw);
      const T* b = reinterpret_cast<const T*>(&b_raw);
      OutVec<To, kVec> o;
#pragma unroll
      for (int k = 0; k < kVec; ++k) o.e[k] = from_f32<To>(((v[i][k] - mean) * rstd * to_f32(w[k]) + to_f32(b[k])) * qs);
      y[idx] = o;
    }
  }
}

}  // namespace laptime
