// Causal flash attention, bf16 in/out, fp32 accumulation and softmax statistics.
//
// Strategy (FlashAttention-2): a block of 4 warps owns 64 query rows of one (batch, head);
// each warp owns 16 rows and keeps its Q fragments, running max m, running sum l and output
// accumulator O in registers. The block walks key/value tiles of 64 rows up to the diagonal,
// staging each tile in shared memory; per tile a warp computes S = Q·Kᵀ with mma.m16n8k16
// (bf16 -> fp32), applies the causal mask on the diagonal tile, updates m and l, rescales O,
// and accumulates P·V, reusing S's accumulator registers directly as the A operand of the
// second product (the m16n8 C layout and the m16n16 A layout line up pairwise).
// Query tiles are scheduled longest-first, since a tile near the end of the sequence walks
// T/64 key tiles and one near the start walks one. Key/value tiles are double-buffered:
// cp.async fetches tile k+1 while the warps compute on tile k. Fragments come out of shared
// memory through ldmatrix (.trans for V, whose B operand is the transpose of its row layout).
//
// mma.m16n8k16 fragment layout (PTX ISA), lane = 4·g + t:
//   A (16x16, row): a0a1 = (g, 2t..2t+1), a2a3 = (g+8, 2t..), a4a5 = (g, 2t+8..), a6a7 = (g+8, 2t+8..)
//   B (16x8, col):  b0b1 = (k=2t..2t+1, n=g), b2b3 = (k=2t+8.., n=g)
//   C (16x8):       c0c1 = (g, 2t..2t+1),  c2c3 = (g+8, 2t..2t+1)
#include "kernels/flash_attention.cuh"

#include <cuda_bf16.h>

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/flash_rows.cuh"
#include "kernels/sm90a.h"
#ifdef LAPTIME_HAVE_SM90A
#include "kernels/flash_attention_sm90.cuh"
#endif

namespace laptime {
namespace {

constexpr int kHeadDim = 64;
constexpr int kBlockM = 64;           // query rows per block
constexpr int kBlockN = 64;           // keys per tile
constexpr int kWarps = kBlockM / 16;  // 16 query rows per warp
constexpr int kPad = 8;               // row padding (bf16): 72-element rows spread a fragment load over all banks
constexpr int kRow = kHeadDim + kPad;

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Starts the copy of rows [row0, row0 + 64) of one head's slice of qkv into a padded shared
// tile (cp.async, 16 bytes per request, bypassing L1); rows past T are zero-filled.
__device__ __forceinline__ void load_tile_async(__nv_bfloat16* tile, const __nv_bfloat16* base, int row0, int T,
                                                int64_t row_stride) {
  for (int i = threadIdx.x; i < kBlockN * (kHeadDim / 8); i += blockDim.x) {
    const int r = i / (kHeadDim / 8), c = (i % (kHeadDim / 8)) * 8;
    const bool inside = row0 + r < T;
    const __nv_bfloat16* src = base + (inside ? (row0 + r) * row_stride + c : 0);
    const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(tile + r * kRow + c));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
  }
}

// Four 8x8 bf16 matrices from shared memory; lane l supplies the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __nv_bfloat16* row) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __nv_bfloat16* row) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

__global__ void __launch_bounds__(kWarps * 32)
    flash_attention_kernel(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ qkv, int T, int H,
                           float scale_log2) {
  __shared__ __align__(16) __nv_bfloat16 q_s[kBlockM * kRow];
  __shared__ __align__(16) __nv_bfloat16 k_s[2][kBlockN * kRow];
  __shared__ __align__(16) __nv_bfloat16 v_s[2][kBlockN * kRow];

  const int q_tile = gridDim.x - 1 - blockIdx.x;  // longest tiles first
  const int bh = blockIdx.y, b = bh / H, h = bh % H;
  const int C = H * kHeadDim;
  const int64_t row_stride = 3 * int64_t{C};
  const __nv_bfloat16* q_base = qkv + int64_t{b} * T * row_stride + h * kHeadDim;
  const __nv_bfloat16* k_base = q_base + C;
  const __nv_bfloat16* v_base = q_base + 2 * C;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int mat = lane / 8, mrow = lane % 8;  // ldmatrix: which 8x8 matrix, which of its rows
  const int q0 = q_tile * kBlockM;
  const int last_tile = min(q0 + kBlockM - 1, T - 1) / kBlockN;

  load_tile_async(q_s, q_base, q0, T, row_stride);
  load_tile_async(k_s[0], k_base, 0, T, row_stride);
  load_tile_async(v_s[0], v_base, 0, T, row_stride);
  cp_async_commit();

  uint32_t qa[kHeadDim / 16][4];  // this warp's 16 query rows, one A fragment per 16-wide slice
  float o[kHeadDim / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY};   // running max of rows g and g+8 (log2 domain)
  float l[2] = {0.f, 0.f};               // running sum of exponentials (this thread's share)
  const int row_g = q0 + warp * 16 + g;  // rows this thread holds: row_g and row_g + 8

  for (int kt = 0; kt <= last_tile; ++kt) {
    const int k0 = kt * kBlockN, buf = kt & 1;
    if (kt < last_tile) {  // prefetch the next tile into the other buffer
      load_tile_async(k_s[buf ^ 1], k_base, k0 + kBlockN, T, row_stride);
      load_tile_async(v_s[buf ^ 1], v_base, k0 + kBlockN, T, row_stride);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (kt == 0) {
#pragma unroll
      for (int ks = 0; ks < kHeadDim / 16; ++ks)
        ldmatrix_x4(qa[ks], q_s + (warp * 16 + (mat % 2) * 8 + mrow) * kRow + ks * 16 + (mat / 2) * 8);
    }
    const __nv_bfloat16* ks_tile = k_s[buf];
    const __nv_bfloat16* vs_tile = v_s[buf];

    // S = Q·Kᵀ. One ldmatrix.x4 yields the B fragments of two 16-wide slices of one 8-key tile.
    float s[kBlockN / 8][4];
#pragma unroll
    for (int nt = 0; nt < kBlockN / 8; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
      for (int ks = 0; ks < kHeadDim / 16; ks += 2) {
        uint32_t kb[4];
        ldmatrix_x4(kb, ks_tile + (nt * 8 + mrow) * kRow + ks * 16 + mat * 8);
        mma_bf16(s[nt], qa[ks], kb[0], kb[1]);
        mma_bf16(s[nt], qa[ks + 1], kb[2], kb[3]);
      }
    }

    // Scale into the log2 domain and mask keys in the future (or past T).
    const bool diagonal = k0 + kBlockN > q0 + warp * 16;
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = k0 + nt * 8 + 2 * t + (e & 1);
        const int row = row_g + (e >> 1) * 8;
        float v = s[nt][e] * scale_log2;
        if (diagonal && (key > row || key >= T)) v = -INFINITY;
        s[nt][e] = v;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], v);
      }
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      const float m_new = fmaxf(m[r], tile_max[r]);
      // A row whose keys are all masked so far keeps m = -inf; exp2 of (-inf) - (-inf) is NaN.
      alpha[r] = m_new == -INFINITY ? 1.f : exp2f(m[r] - m_new);
      m[r] = m_new;
      l[r] *= alpha[r];
    }
#pragma unroll
    for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float mr = m[e >> 1];
        const float p = mr == -INFINITY ? 0.f : exp2f(s[nt][e] - mr);
        s[nt][e] = p;
        l[e >> 1] += p;
      }
#pragma unroll
    for (int dt = 0; dt < kHeadDim / 8; ++dt) {
      o[dt][0] *= alpha[0];
      o[dt][1] *= alpha[0];
      o[dt][2] *= alpha[1];
      o[dt][3] *= alpha[1];
    }

    // O += P·V: S's accumulators for keys [16j, 16j+16) are the A fragment of slice j; one
    // ldmatrix.x4.trans yields the B fragments of two 8-wide column tiles of V.
#pragma unroll
    for (int j = 0; j < kBlockN / 16; ++j) {
      const uint32_t pa[4] = {pack_bf16(s[2 * j][0], s[2 * j][1]), pack_bf16(s[2 * j][2], s[2 * j][3]),
                              pack_bf16(s[2 * j + 1][0], s[2 * j + 1][1]), pack_bf16(s[2 * j + 1][2], s[2 * j + 1][3])};
#pragma unroll
      for (int dt = 0; dt < kHeadDim / 8; dt += 2) {
        uint32_t vb[4];
        ldmatrix_x4_trans(vb, vs_tile + (j * 16 + (mat % 2) * 8 + mrow) * kRow + (dt + mat / 2) * 8);
        mma_bf16(o[dt], pa, vb[0], vb[1]);
        mma_bf16(o[dt + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads();  // every warp is done with this buffer before it is refilled
  }

  store_rows<kHeadDim>(out + int64_t{b} * T * C + h * kHeadDim + 2 * t, C, l, row_g, T,
                       [&](int j, int e) { return o[j][e]; });
}

}  // namespace

bool flash_attention_supported(DType dtype, int head_dim) { return dtype == DType::BF16 && head_dim == kHeadDim; }

void flash_attention_forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
  if (B * T == 0) return;
  const dim3 grid(ceil_div(T, kBlockM), B * H);
  const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));  // log2(e) / sqrt(hd)
  flash_attention_kernel<<<grid, kWarps * 32, 0, stream>>>(static_cast<__nv_bfloat16*>(out),
                                                           static_cast<const __nv_bfloat16*>(qkv), T, H, scale_log2);
  CUDA_CHECK_LAUNCH();
}

std::string flash_attention_wgmma_prepare(DType dtype, int head_dim) {
  if (dtype != DType::BF16) return std::string("the wgmma attention core takes bf16, not ") + dtype_name(dtype) + ".";
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (std::string why = sm90a_refusal("the wgmma attention core", device); !why.empty()) return why;
#ifdef LAPTIME_HAVE_SM90A
  std::string why = flash_sm90::refusal(head_dim, device);
  if (why.empty()) flash_sm90::prepare();
  return why;
#else
  (void)head_dim;
  return "";  // not reached: sm90a_refusal said why above
#endif
}

void flash_attention_wgmma_forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
#ifdef LAPTIME_HAVE_SM90A
  flash_sm90::forward(out, qkv, B, T, H, stream);
#else
  (void)out, (void)qkv, (void)B, (void)T, (void)H, (void)stream;
  throw Error("flash_attention_wgmma_forward: not compiled in this build (flash_attention_wgmma_prepare says why).");
#endif
}

}  // namespace laptime
