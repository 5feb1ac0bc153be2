// LayerNorm of a row that one warp holds in registers: the statistics (fp32, the variance around
// the mean: two passes over the registers) and the output, written 16 bytes (or 8, fp32 -> fp16)
// a store. Shared by kernels/layernorm.cu's fast path and kernels/residual.cu's add fused with
// the LayerNorm after it, which fill the registers differently (a row read from memory; x + r).
//
// A lane holds NV vectors, NV the row's (ceil(n_vec / 32)), a template argument: the register
// array is sized to the row at compile time (with_vecs_per_lane picks the instantiation at run
// time). Sized for the widest row instead (NV = 8 whatever C is, laptime lab's layernorm v3),
// GPT-2's 768-wide bf16 rows used 3 of 8 vectors and still paid 117 registers a thread: 22%
// occupancy, so 8192 rows ran in ~4.4 rounds of DRAM latency, 38% of the copy roof. The row is
// also kept packed (PackedRow below), which halves a bf16 row's registers again.
#pragma once

#include <type_traits>

#include "kernels/common.cuh"

namespace laptime {

// Vectors a lane holds at most: a row of up to 32 · 8 vectors (2048 bf16, 1024 fp32).
constexpr int kLayerNormMaxVecPerLane = 8;

// Calls f(std::integral_constant<int, NV>{}) with NV = ceil(n_vec / 32), the vectors a lane of a
// warp holds for a row of n_vec vectors, 1 <= n_vec <= 32 · kLayerNormMaxVecPerLane (the caller
// checked).
template <class F>
void with_vecs_per_lane(int n_vec, F&& f) {
  switch ((n_vec + 31) / 32) {
    case 1:
      f(std::integral_constant<int, 1>{});
      break;
    case 2:
      f(std::integral_constant<int, 2>{});
      break;
    case 3:
      f(std::integral_constant<int, 3>{});
      break;
    case 4:
      f(std::integral_constant<int, 4>{});
      break;
    case 5:
      f(std::integral_constant<int, 5>{});
      break;
    case 6:
      f(std::integral_constant<int, 6>{});
      break;
    case 7:
      f(std::integral_constant<int, 7>{});
      break;
    default:
      f(std::integral_constant<int, kLayerNormMaxVecPerLane>{});
      break;
  }
}

// kVec elements of the output type, stored with one access (16 bytes, or 8 for fp32 -> fp16).
template <class To, int kVec>
struct alignas(sizeof(To) * kVec) OutVec {
  To e[kVec];
};

// A row of C = n_vec·kVec elements held by one warp in registers: vector i of a lane is elements
// (i·32 + lane)·kVec .. + kVec - 1, valid where i·32 + lane < n_vec; kVec = 16 / sizeof(T).
// Two ways to hold it, one interface (at(i, k) as fp32; fresh() before each pass after the first):
//
// FloatRow widens the row to fp32 once, as it is loaded (laptime lab's layernorm v3).
template <class T, int NV>
struct FloatRow {
  static constexpr int kVec = 16 / sizeof(T);
  float v[NV][kVec];
  __device__ __forceinline__ void set(int i, uint4 raw) {
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[i][k] = to_f32(e[k]);
  }
  __device__ __forceinline__ float at(int i, int k) const { return v[i][k]; }
  __device__ __forceinline__ void fresh() {}
};

// PackedRow keeps the row as stored and widens it in each pass: a bf16 row costs half the registers
// of its floats (12 a thread at C = 768 instead of 24). fresh() is an empty asm that claims to
// rewrite the packed registers, so the compiler cannot reuse an earlier pass's fp32 values and
// widens afresh instead of keeping a float copy live across the reductions (which would cost the
// registers the packing saves).
template <class T, int NV>
struct PackedRow {
  static constexpr int kVec = 16 / sizeof(T);
  uint4 raw[NV];
  __device__ __forceinline__ void set(int i, uint4 r) { raw[i] = r; }
  __device__ __forceinline__ float at(int i, int k) const { return to_f32(reinterpret_cast<const T*>(&raw[i])[k]); }
  __device__ __forceinline__ void fresh() {
#pragma unroll
    for (int i = 0; i < NV; ++i) asm("" : "+r"(raw[i].x), "+r"(raw[i].y), "+r"(raw[i].z), "+r"(raw[i].w));
  }
};

// The LayerNorm of the row x (FloatRow or PackedRow of T, NV vectors a lane): weight and bias [C]
// of T, 16-byte aligned; y the row's output,
// y = ((x - mean) · rstd · weight + bias) · qs (qs = 1 but for fp8's inverse scale).
template <class T, class To, int NV, template <class, int> class Row>
__device__ __forceinline__ void layernorm_registers(OutVec<To, 16 / sizeof(T)>* __restrict__ y, Row<T, NV>& x,
                                                    const T* __restrict__ weight, const T* __restrict__ bias, int n_vec,
                                                    int C, float eps, float qs, int lane) {
  constexpr int kVec = 16 / sizeof(T);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < NV; ++i)
    if (i * 32 + lane < n_vec)
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum += x.at(i, k);
  const float mean = warp_sum(sum) / C;
  x.fresh();
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < NV; ++i)
    if (i * 32 + lane < n_vec)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float d = x.at(i, k) - mean;
        sq += d * d;
      }
  const float rstd = rsqrtf(warp_sum(sq) / C + eps);
  x.fresh();
#pragma unroll
  for (int i = 0; i < NV; ++i) {
    const int idx = i * 32 + lane;
    if (idx < n_vec) {
      const uint4 w_raw = reinterpret_cast<const uint4*>(weight)[idx];
      const uint4 b_raw = reinterpret_cast<const uint4*>(bias)[idx];
      const T* w = reinterpret_cast<const T*>(&w_raw);
      const T* b = reinterpret_cast<const T*>(&b_raw);
      OutVec<To, kVec> o;
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        o.e[k] = from_f32<To>(((x.at(i, k) - mean) * rstd * to_f32(w[k]) + to_f32(b[k])) * qs);
      y[idx] = o;
    }
  }
}

}  // namespace laptime
