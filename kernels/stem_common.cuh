// What the fused stem's two kernels share (kernels/stem.cu: mma.sync, sm_80+; kernels/stem_sm90.cu:
// wgmma, sm_90a): the launch parameters, the cut of a work unit into steps, the copy helpers, and
// the 3×3/2 max pool over the ring of conv rows, which both run unchanged. Internal to kernels/.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/stem.cuh"

namespace laptime::stem {

constexpr int kRing = 5;            // conv rows kept: a step's 2p−1 .. 2p+3
constexpr int kInRows = kRing + 3;  // s2d rows a step reads at most
constexpr int kCin = kFusedStemInChannels;
constexpr int kK = kFusedStemKernel * kFusedStemKernel * kCin;  // 256
constexpr int kPixelBytes = kCin * 2;                           // 32: one s2d pixel

__host__ __device__ inline int round128(int b) { return (b + 127) / 128 * 128; }

struct StemParams {
  void* out;                    // [N, Po, Po, C]: bf16, or e4m3 with out_inv_scale
  const float* out_inv_scale;   // e4m3 output: 1/s, device (the e4m3 stream's first scale); else nullptr
  const __nv_bfloat16* in;      // [N, Hs, Hs, 16]
  const __nv_bfloat16* weight;  // [C, 256]
  const __nv_bfloat16* bias;    // [C]
  int N, Hs, So, Po;            // images, s2d side, conv output side (Hs − 3), pooled side
  int bands, band_rows;         // per image: bands of band_rows pooled rows (the last may be short)
};

// One step of a unit (image n, band): pooled rows [p, pe), conv rows [lo, hi) computed now.
struct Step {
  int n, p, pe, lo, hi;
};
__host__ __device__ inline int unit_steps(const StemParams& q, int unit) {
  const int p0 = (unit % q.bands) * q.band_rows, p1 = min(p0 + q.band_rows, q.Po);
  return (p1 - p0 + 1) / 2;
}
__host__ __device__ inline Step make_step(const StemParams& q, int unit, int s) {
  Step st;
  st.n = unit / q.bands;
  const int p0 = (unit % q.bands) * q.band_rows, p1 = min(p0 + q.band_rows, q.Po);
  st.p = p0 + 2 * s;
  st.pe = min(st.p + 2, p1);
  // Pooled row p's window: conv rows 2p−1 .. 2p+1. In a band's later steps row 2p−1 is in the
  // ring already (the previous step's last row, 2(p−2)+3).
  st.lo = s == 0 ? max(2 * st.p - 1, 0) : 2 * st.p;
  st.hi = min(2 * st.pe, q.So);  // the last pooled row pe − 1 needs conv rows up to 2(pe − 1) + 1
  return st;
}

// The work after step s of `unit` for a persistent block that takes every gridDim.x-th unit:
// the next step of the same unit, else the first of the block's next unit (past the last unit
// when the block is done).
struct Work {
  int unit, s;
};
__device__ __forceinline__ Work next_work(const StemParams& q, int unit, int s) {
  if (s + 1 < unit_steps(q, unit)) return {unit, s + 1};
  return {unit + static_cast<int>(gridDim.x), 0};
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

// Channels 8·cc .. 8·cc + 7 of pooled pixel (n, pr, x), eight bf16 maxima in `best`: stored as 16
// bytes (bf16) or 8 (e4m3: · out_scale, rounded, saturated; what quantize_fp8 writes from the bf16
// output, the unfused path's).
template <int C>
__device__ __forceinline__ void store_pooled(const StemParams& q, int n, int pr, int x, int cc, const uint4& best,
                                             float out_scale) {
  const int64_t at = ((static_cast<int64_t>(n) * q.Po + pr) * q.Po + x) * C + cc * 8;
  if (q.out_inv_scale) {
    const __nv_bfloat162* m = reinterpret_cast<const __nv_bfloat162*>(&best);
    uint2 packed;
    __nv_fp8_e4m3* o = reinterpret_cast<__nv_fp8_e4m3*>(&packed);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float2 f = __bfloat1622float2(m[c]);
      o[2 * c] = from_f32<__nv_fp8_e4m3>(f.x * out_scale);
      o[2 * c + 1] = from_f32<__nv_fp8_e4m3>(f.y * out_scale);
    }
    *reinterpret_cast<uint2*>(static_cast<uint8_t*>(q.out) + at) = packed;
  } else {
    *reinterpret_cast<uint4*>(static_cast<__nv_bfloat16*>(q.out) + at) = best;
  }
}

// The 3×3/2 max pool of pooled rows [st.p, st.pe) out of the ring (conv row r in slot r % kRing,
// pixel x at (slot·So + x)·RingPx elements, ReLU'd bf16), by `threads` threads: 8 channels of one
// pooled pixel a thread, stored as 16 bytes (bf16) or 8 (e4m3: · out_scale, rounded, saturated).
// Window positions outside the image are clamped onto its edge, as in the unfused max pool
// (kernels/pooling.cu): a clamped position repeats one already in the window, so the max is the
// clipped window's (padding never wins: ReLU ≥ 0 and every window holds a real pixel), and the
// nine 16-byte loads issue together, with no loop between them.
// `slot(r)`: the ring slot of conv row r (default: r % kRing, the five-row ring of a kernel that
// pools between its steps; the overlapped wgmma kernel addresses its ring by position).
struct SlotByRow {
  __device__ __forceinline__ int operator()(int r) const { return r % kRing; }
};
template <int C, int RingPx, class Slot = SlotByRow>
__device__ __forceinline__ void pool_step(const StemParams& q, const Step& st, const __nv_bfloat16* ring,
                                          float out_scale, int tid, int threads, Slot slot = {}) {
  constexpr int NT = C / 8;
  const int items = (st.pe - st.p) * q.Po * NT;
  for (int it = tid; it < items; it += threads) {
    const int cc = it % NT, pq = it / NT;
    const int second = pq >= q.Po;  // pe − p ≤ 2 pooled rows: pq < 2·Po
    const int x = pq - (second ? q.Po : 0), pr = st.p + second;
    const __nv_bfloat16* row[3];
    int col[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      row[d] = ring + slot(min(max(2 * pr - 1 + d, 0), q.So - 1)) * q.So * RingPx + cc * 8;
      col[d] = min(max(2 * x - 1 + d, 0), q.So - 1) * RingPx;
    }
    uint4 v[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) v[k] = *reinterpret_cast<const uint4*>(row[k / 3] + col[k % 3]);
    uint4 best = v[0];
    __nv_bfloat162* m = reinterpret_cast<__nv_bfloat162*>(&best);
#pragma unroll
    for (int k = 1; k < 9; ++k) {
      const __nv_bfloat162* e = reinterpret_cast<const __nv_bfloat162*>(&v[k]);
#pragma unroll
      for (int c = 0; c < 4; ++c) m[c] = __hmax2(m[c], e[c]);
    }
    store_pooled<C>(q, st.n, pr, x, cc, best, out_scale);
  }
}

}  // namespace laptime::stem
