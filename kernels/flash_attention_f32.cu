// Causal flash attention for fp32 storage: fp32 FFMA throughout, no T x T matrix in memory.
//
// Strategy (FlashAttention-2 on CUDA cores): a block of 256 threads owns 64 query rows of one
// (batch, head) and walks key/value tiles of 64 rows up to the diagonal. Tiles above the
// diagonal are never visited and only the diagonal tile is masked (query and key tiles are
// both 64 wide and aligned, so keys past T can only appear there). The threads form a 16 x 16
// grid, ty = tid / 16 and tx = tid % 16; each owns the same 4 query rows (4·ty..4·ty+3) in S
// and in O: a 4 x 4 register micro-tile of S (keys 4·tx..4·tx+3) and a 4 x hd/16 micro-tile
// of O (dims tx·hd/16..). Both products are outer products out of shared memory with
// 16-byte loads: per 4 steps of the inner dimension, 4 loads broadcast the 4 rows of Q (or P)
// to the 16 lanes of a row group and 4 loads give 4 x 4 of Kᵀ (or V), for 64 FFMAs.
//   S = Q·Kᵀ  Q [row][d] as loaded; K stored transposed, Kᵀ [d][key], so a thread's 4 keys
//             are one float4 and the 16 lanes of a row group read 256 contiguous bytes.
//   softmax   the 16 lanes sharing 4 rows are half a warp: row max by __shfl_xor (1, 2, 4, 8);
//             running max m and sum l per row FA-2 style (l is each lane's share, summed once
//             at the end), O rescaled by expf(m_old - m_new), normalised once at the end.
//   O += P·V  P goes through shared memory (it reuses the Kᵀ buffer, dead by then) as
//             [row][key]; a row group writes and reads only its own 4 rows, so __syncwarp
//             orders that exchange; V [key][d] as loaded.
// Arithmetic is exact-fp32 (fmaf, expf, not __expf; no TF32), which keeps strict fp32 within
// 1e-5 of the CPU oracle like the naive core. Query tiles are scheduled heaviest first: the
// tile index is the grid's slow dimension and reversed, so the tiles that walk T/64 key tiles
// start before the ones that walk one.
//
// Shared memory: Q 64·hd + max(hd·64, 64·64) + V 64·hd floats = 48 KB at hd = 64 (static,
// the limit exactly); no padding is needed: Q and P loads are broadcasts within a quarter
// warp, Kᵀ and V loads are contiguous, and the transposed K stores are made bank-conflict
// free by giving consecutive threads consecutive keys.
//
// Expected cost (H200, B8 T1024 H12 hd64): 96 heads x 136 (query, key) tile pairs x 2 x 2 x
// 64³ FLOP = 13.7 GFLOP per layer (the masked half of each diagonal tile included). The inner
// loop issues one 16-byte shared load per 8 FFMAs, so shared-memory bandwidth, not the FFMA
// pipe (~67 TFLOP/s), bounds it: expect ~25 TFLOP/s, ~0.55 ms per layer, against the naive
// core's ~0.85 ms of GEMMs plus 400 MB of score/probability traffic.
#include "kernels/flash_attention_f32.cuh"

#include <cmath>
#include <string>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kBlockM = 64;    // query rows per block
constexpr int kBlockN = 64;    // keys per tile
constexpr int kThreads = 256;  // 16 x 16 threads, 4 x 4 micro-tiles of the 64 x 64 S
constexpr int kMicro = 4;      // rows (and keys) per thread

// n consecutive floats (n = 1, 2 or 4) from shared or global memory, and back.
template <int N>
__device__ __forceinline__ void load_floats(float (&dst)[N], const float* src) {
  if constexpr (N == 4) {
    const float4 v = *reinterpret_cast<const float4*>(src);
    dst[0] = v.x;
    dst[1] = v.y;
    dst[2] = v.z;
    dst[3] = v.w;
  } else if constexpr (N == 2) {
    const float2 v = *reinterpret_cast<const float2*>(src);
    dst[0] = v.x;
    dst[1] = v.y;
  } else {
    dst[0] = *src;
  }
}
template <int N>
__device__ __forceinline__ void store_floats(float* dst, const float (&src)[N]) {
  if constexpr (N == 4) {
    *reinterpret_cast<float4*>(dst) = make_float4(src[0], src[1], src[2], src[3]);
  } else if constexpr (N == 2) {
    *reinterpret_cast<float2*>(dst) = make_float2(src[0], src[1]);
  } else {
    *dst = src[0];
  }
}

// Row r of one head's q, k or v (hd floats at base + r · row_stride); zeros past T.
__device__ __forceinline__ float4 load_row_chunk(const float* base, int r, int c, int T, int64_t row_stride) {
  if (r >= T) return make_float4(0.f, 0.f, 0.f, 0.f);
  return __ldg(reinterpret_cast<const float4*>(base + r * row_stride + c));
}

// Reduction over the 16 lanes of a row group (lanes 0-15 or 16-31 of the warp).
__device__ __forceinline__ float group_max(float v) {
#pragma unroll
  for (int o = 1; o < 16; o <<= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = 1; o < 16; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int D>
__global__ void __launch_bounds__(kThreads, 2)
    flash_attention_f32_kernel(float* __restrict__ out, const float* __restrict__ qkv, int T, int H, float scale) {
  static_assert(D % 16 == 0 && D <= 64, "head size: a multiple of 16 up to 64");
  constexpr int kDV = D / 16;     // O columns per thread
  constexpr int kChunks = D / 4;  // float4 chunks per row of q, k or v
  constexpr int kKP = D * kBlockN > kBlockM * kBlockN ? D * kBlockN : kBlockM * kBlockN;
  static_assert((kBlockM * kChunks) % kThreads == 0 && (kBlockN * kChunks) % kThreads == 0, "whole tile loads");
  __shared__ __align__(16) float q_s[kBlockM * D];  // [row][d]
  __shared__ __align__(16) float kp_s[kKP];         // Kᵀ [d][key], then P [row][key]
  __shared__ __align__(16) float v_s[kBlockN * D];  // [key][d]

  const int bh = blockIdx.x, b = bh / H, h = bh % H;
  const int q_tile = gridDim.y - 1 - blockIdx.y;  // heaviest first
  const int C = H * D;
  const int64_t row_stride = 3 * int64_t{C};
  const float* q_base = qkv + int64_t{b} * T * row_stride + h * D;
  const float* k_base = q_base + C;
  const float* v_base = q_base + 2 * C;
  const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
  const int q0 = q_tile * kBlockM;
  const int row0 = ty * kMicro;  // this thread's first row within the tile (S and O)
  const int key0 = tx * kMicro;  // this thread's first key within the tile (S and P)

  for (int i = tid; i < kBlockM * kChunks; i += kThreads) {
    const int r = i / kChunks, c = (i % kChunks) * 4;
    *reinterpret_cast<float4*>(q_s + r * D + c) = load_row_chunk(q_base, q0 + r, c, T, row_stride);
  }

  float o[kMicro][kDV] = {};
  float m[kMicro], l[kMicro];  // running max (scaled scores) and this lane's share of the sum
#pragma unroll
  for (int i = 0; i < kMicro; ++i) m[i] = -INFINITY, l[i] = 0.f;

  for (int kt = 0; kt <= q_tile; ++kt) {
    const int k0 = kt * kBlockN;
    for (int i = tid; i < kBlockN * kChunks; i += kThreads) {
      // K: consecutive threads take consecutive keys, so the transposed stores hit 32 banks.
      const int kr = i % kBlockN, kc = (i / kBlockN) * 4;
      const float4 kv = load_row_chunk(k_base, k0 + kr, kc, T, row_stride);
      kp_s[(kc + 0) * kBlockN + kr] = kv.x;
      kp_s[(kc + 1) * kBlockN + kr] = kv.y;
      kp_s[(kc + 2) * kBlockN + kr] = kv.z;
      kp_s[(kc + 3) * kBlockN + kr] = kv.w;
      // V: row-major, as loaded.
      const int vr = i / kChunks, vc = (i % kChunks) * 4;
      *reinterpret_cast<float4*>(v_s + vr * D + vc) = load_row_chunk(v_base, k0 + vr, vc, T, row_stride);
    }
    __syncthreads();  // Q (first tile), Kᵀ and V in place

    // S = Q·Kᵀ for rows row0.., keys key0...
    float s[kMicro][kMicro] = {};
#pragma unroll
    for (int d = 0; d < D; d += 4) {
      float q[kMicro][4], k[4][kMicro];
#pragma unroll
      for (int i = 0; i < kMicro; ++i) load_floats(q[i], q_s + (row0 + i) * D + d);
#pragma unroll
      for (int e = 0; e < 4; ++e) load_floats(k[e], kp_s + (d + e) * kBlockN + key0);
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int i = 0; i < kMicro; ++i)
#pragma unroll
          for (int j = 0; j < kMicro; ++j) s[i][j] = fmaf(q[i][e], k[e][j], s[i][j]);
    }

    // Scale, mask the future on the diagonal tile, update the running statistics.
    const bool diagonal = kt == q_tile;
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        float v = s[i][j] * scale;
        if (diagonal && key0 + j > row0 + i) v = -INFINITY;  // key k0 + key0 + j after query q0 + row0 + i
        s[i][j] = v;
        tile_max = fmaxf(tile_max, v);
      }
      const float m_new = fmaxf(m[i], group_max(tile_max));
      // Key 0 is visible to every row, so m is finite from the first tile on; the guard keeps
      // a fully masked row at p = 0 rather than expf(-inf - (-inf)) = NaN all the same.
      const float alpha = m_new == -INFINITY ? 1.f : expf(m[i] - m_new);
      m[i] = m_new;
      l[i] *= alpha;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const float p = m_new == -INFINITY ? 0.f : expf(s[i][j] - m_new);
        s[i][j] = p;
        l[i] += p;
      }
#pragma unroll
      for (int c = 0; c < kDV; ++c) o[i][c] *= alpha;
    }

    __syncthreads();  // every thread is done reading Kᵀ before P overwrites it
#pragma unroll
    for (int i = 0; i < kMicro; ++i) store_floats(kp_s + (row0 + i) * kBlockN + key0, s[i]);
    __syncwarp();  // P's rows row0.. are written and read by the same 16 lanes

    // O += P·V for rows row0.., dims tx·kDV...
#pragma unroll 4
    for (int kk = 0; kk < kBlockN; kk += 4) {
      float p[kMicro][4], v[4][kDV];
#pragma unroll
      for (int i = 0; i < kMicro; ++i) load_floats(p[i], kp_s + (row0 + i) * kBlockN + kk);
#pragma unroll
      for (int e = 0; e < 4; ++e) load_floats(v[e], v_s + (kk + e) * D + tx * kDV);
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int i = 0; i < kMicro; ++i)
#pragma unroll
          for (int c = 0; c < kDV; ++c) o[i][c] = fmaf(p[i][e], v[e][c], o[i][c]);
    }
    __syncthreads();  // every thread is done with P and V before the next tile overwrites them
  }

#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const float inv = 1.f / group_sum(l[i]);  // every lane of the group takes part in the shuffle
    const int row = q0 + row0 + i;
    if (row >= T) continue;
    float r[kDV];
#pragma unroll
    for (int c = 0; c < kDV; ++c) r[c] = o[i][c] * inv;
    store_floats(out + (int64_t{b} * T + row) * C + h * D + tx * kDV, r);
  }
}

template <int D>
void launch(float* out, const float* qkv, int B, int T, int H, cudaStream_t stream) {
  const dim3 grid(B * H, ceil_div(T, kBlockM));
  const float scale = 1.f / std::sqrt(static_cast<float>(D));
  flash_attention_f32_kernel<D><<<grid, kThreads, 0, stream>>>(out, qkv, T, H, scale);
}

}  // namespace

bool flash_attention_f32_supported(int head_dim) { return head_dim == 16 || head_dim == 32 || head_dim == 64; }

void flash_attention_f32_forward(float* out, const float* qkv, int B, int T, int H, int head_dim, cudaStream_t stream) {
  if (int64_t{B} * T * H == 0) return;
  switch (head_dim) {
    case 16:
      launch<16>(out, qkv, B, T, H, stream);
      break;
    case 32:
      launch<32>(out, qkv, B, T, H, stream);
      break;
    case 64:
      launch<64>(out, qkv, B, T, H, stream);
      break;
    default:
      throw Error("internal: the fp32 flash attention kernel has no head size " + std::to_string(head_dim) +
                  " (16, 32 or 64).");
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
