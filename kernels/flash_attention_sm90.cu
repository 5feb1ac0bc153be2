// Causal flash attention on wgmma (sm_90a): bf16 in and out, head size 64, fp32 accumulation and
// softmax statistics. The algorithm is kernels/flash_attention.cu's (FlashAttention-2: the online
// softmax, the causal half skipped, the diagonal tile masked, the longest query tiles first); what
// changes is who multiplies and how the operands reach the tensor cores.
//
// The work cut. A block owns kBlockM query rows of one (batch, head), one warpgroup (128 threads)
// each 64 rows: warpgroup w owns rows 64w .. 64w + 63, which is wgmma's M. Per key tile of
// kBlockN keys:
//   S = Q·Kᵀ   kHeadDim / 16 = 4 wgmma m64nNk16, Q (A) and K (B) both read from shared memory
//   softmax     on S's accumulators in registers (row max and sum over the 4 lanes of a row)
//   O += P·V   kBlockN / 16 wgmma m64n64k16, P (A) from registers (the accumulators of S rounded
//              to bf16: the fragments line up as with mma.sync), V (B) from shared memory
// The mma.sync kernel issues 8x as many tensor instructions, each a warp's, and feeds every one
// through ldmatrix into registers; here a warpgroup's instruction reads its B operand (and Q)
// straight from shared memory, and the S and P·V products run asynchronously to the issuing warps.
//
// The layout wgmma reads: a 64-element bf16 row is 128 bytes, exactly the 128-byte swizzle's row,
// so Q, K and V tiles are stored row after row (1024-byte aligned), the 16-byte chunk c of row r at
// chunk c ^ (r % 8) of its row (the swizzle the hardware undoes; a ldmatrix-free, conflict-free
// layout for both the cp.async writes and wgmma's reads). In cute's terms
// (cute/atom/mma_traits_sm90_gmma.hpp, in 16-byte units):
//   Q, K as K-major operands   ((8,n),2):((8,SBO),1)       SBO = 1024 bytes (8 rows), LBO unused (1);
//                              the k-step's 16 elements are 32 bytes on from the row's start
//   V as an N-major operand    ((8,n),(8,k)):((1,LBO),(8,SBO)): N = 64 is one 128-byte row (LBO
//                              unused), K steps by rows: SBO = 1024 bytes; a k-step is 16 rows, 2048 bytes
//
// The pipeline. K and V tiles arrive by cp.async into a ring of kStages stages, kStages - 2 tiles
// ahead; the barrier at a tile's top makes every thread's copies visible (and, with
// fence.proxy.async, visible to the tensor cores' reads). A warpgroup waits for its P·V of tile kt
// only after issuing S of tile kt + 1, so the spare stage keeps V of tile kt until the barrier
// after. Two blocks an SM: while one block's warpgroups run their softmax, the other's run their
// products.
//
// The softmax is the cost: at head size 64 a score's exponential (the SFU: 16 an SM a clock) takes
// as long as its share of both products (256 FLOPs at 4096 an SM a clock), and every other
// instruction a score competes for the same issue slots. Here a score costs about five: its max,
// one FFMA (the scale folded in), the exponential, its sum, half a conversion. The mask runs only
// on tiles that reach the diagonal; the running max moves only when it rises by 2^8 (kLazyLog2),
// so O's rescale is skipped on most tiles; the copies' addresses are a cursor, the descriptors
// made once.
//
// Measured (H100, GPT-2's shape B8 T1024 H12; docs/history/gpt2-notes.md, "A Hopper attention
// core: measured"): 45 us in a loop of launches, 47.6 us hot and 48.5 cold in `laptime lab`
// against cuDNN's 49.2 and 49.6 (the first cut, everything above but the wgmma, 88 us; the mma.sync
// kernel 123). Nsight Compute: the tensor pipe busy 29-31% of the time, the ALU pipe 40%, the SFU
// 34%, issue 48%: no unit is the limit; each warpgroup's S -> softmax -> P·V chain is, with four
// warpgroups an SM to cover it. The next step is FlashAttention-3's: a producer warp with TMA and
// two consumer warpgroups taking the tensor cores in turn.
//
// Fragments (PTX ISA, wgmma "Register Fragments"; warp v of the warpgroup, lane = 4g + t):
//   D (fp32), m64nN: d[4j + e] is row 16v + g + 8·(e >> 1), column 8j + 2t + (e & 1)
//   A (registers) of k-step j: {d[8j], d[8j+1]}, {d[8j+2], d[8j+3]}, {d[8j+4], d[8j+5]}, {d[8j+6], d[8j+7]}
//   of S rounded to bf16 pairs: rows g and g + 8, keys 16j + 2t and 16j + 8 + 2t (mma.m16n8k16's A)
#include "kernels/flash_attention_sm90.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/flash_rows.cuh"
#include "kernels/wgmma.cuh"

namespace laptime::flash_sm90 {
namespace {

constexpr int kHeadDim = 64;
constexpr int kRowBytes = kHeadDim * 2;  // one 128-byte swizzle row
constexpr float kLazyLog2 = 8.f;         // the running max's slack, log2 units (softmax_tile)

// A block of kBlockM query rows is kBlockM / 64 warpgroups.
template <int kBlockM, int kBlockN, int kStages>
struct Config {
  static constexpr int kThreads = kBlockM * 2;
  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kTileBytes = kBlockN * kRowBytes;                     // K or V
  static constexpr int kStageBytes = 2 * kTileBytes;                         // K then V
  static constexpr int kSmemBytes = kQBytes + kStages * kStageBytes + 1024;  // + the 1024-byte alignment
  static constexpr int kAccS = kBlockN / 2;                                  // S's accumulators a thread
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// D[64 x N] (+)= A[64 x 16] · B[16 x N], N = 64 or 128, both K-major in shared memory (128-byte
// swizzle); `accumulate` 0 overwrites D.
template <int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  static_assert(N == 64 || N == 128, "the key tiles this kernel is built for");
  if constexpr (N == 64) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
        "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, "
        "1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
        "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "
        "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, "
        "%57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  }
}

// D[64 x 64] += A[64 x 16] (registers: mma.m16n8k16's A fragment per warp) · B[16 x 64] (shared
// memory, N-major: imm-trans-b 1, 128-byte swizzle).
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
      "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, "
      "%35}, %36, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// A shared-memory matrix descriptor, 128-byte swizzle (layout type 1, bits 62-63), SBO 1024 bytes
// (8 rows of 128), LBO 1 (16 bytes: unused by these layouts, see the top).
__device__ __forceinline__ uint64_t descriptor(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

// 2^x on the SFU, subnormal results flushed to zero (exp2f adds a range fix-up around it).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// This thread's share of copying tiles of kRows rows of one head's q, k or v, the tiles in order
// from row `first`: the 16-byte chunks threadIdx.x + n·kThreads of a tile, i.e. chunk c = threadIdx.x % 8
// of rows r0 + n·kRowStep. kRowStep is a multiple of 8, so every chunk of the thread sits at the
// same swizzled column and its destinations are one offset apart; its sources are a cursor that
// moves by a constant: a chunk costs a 64-bit add, a compare and the copy. Rows past T are
// zero-filled (their scores are masked, and a zero V row keeps 0 · garbage out of P·V).
template <int kRows, int kThreads>
struct TileCopy {
  static constexpr int kPerThread = kRows * (kRowBytes / 16) / kThreads;
  static constexpr int kRowStep = kThreads / 8;
  static_assert(kRows * (kRowBytes / 16) % kThreads == 0 && kRowStep % 8 == 0, "whole chunks, one swizzle column");
  const char* next;    // this thread's first chunk of the next tile
  const char* row0;    // row 0 of the head: a valid address for the zero-filled chunks
  int64_t chunk_step;  // bytes between this thread's chunks (kRowStep rows)
  int64_t tile_step;   // bytes between tiles (kRows rows)
  uint32_t dst;        // its first chunk's offset in a tile
  int r0;

  __device__ TileCopy(const __nv_bfloat16* base, int64_t row_stride, int first = 0) : r0(threadIdx.x / 8) {
    const int c = threadIdx.x % 8;
    row0 = reinterpret_cast<const char*>(base);
    next = row0 + ((first + r0) * row_stride + c * 8) * 2;
    chunk_step = kRowStep * row_stride * 2;
    tile_step = kRows * row_stride * 2;
    dst = r0 * kRowBytes + ((c ^ (r0 % 8)) * 16);
  }
  // Starts the copy of the next tile, rows [first, first + kRows), into the tile at shared address
  // `tile`, and moves the cursor on.
  __device__ __forceinline__ void start(uint32_t tile, int first, int T) {
    const char* p = next;
#pragma unroll
    for (int n = 0; n < kPerThread; ++n, p += chunk_step) {
      const bool inside = first + r0 + n * kRowStep < T;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tile + dst + n * kRowStep * kRowBytes),
                   "l"(inside ? p : row0), "r"(inside ? 16 : 0));
    }
    next += tile_step;
  }
};

// Per thread, what the causal mask needs: key k0 + c (c = 8(i / 4) + (i & 1) + 2t) of score i is
// out when c > last[r] - k0 (r: row row_g or row_g + 8, T folded in), and a tile needs the test
// only when it reaches past `first`, the warp's first row.
struct Rows {
  int last0, last1, first;
};

// Starts the copies of tile `tile` (K then V; the tiles come in order) into its stage and commits
// them as one group; past the last tile the group is empty (the waits count groups).
template <class Cfg, int kBlockN, int kStages>
__device__ __forceinline__ void prefetch(uint32_t ring, TileCopy<kBlockN, Cfg::kThreads>& k,
                                         TileCopy<kBlockN, Cfg::kThreads>& v, int tile, int tiles, int T) {
  if (tile < tiles) {
    const uint32_t st = ring + (tile % kStages) * Cfg::kStageBytes;
    k.start(st, tile * kBlockN, T);
    v.start(st + Cfg::kTileBytes, tile * kBlockN, T);
  }
  cp_async_commit();
}

// S = Q·Kᵀ, this warpgroup's 64 rows by the tile's keys: issued and committed, not waited for. A
// k-step is 32 bytes on along the rows: +2 in the descriptor's address field.
template <int kBlockN>
__device__ __forceinline__ void issue_scores(float (&s)[kBlockN / 2], uint64_t q_desc, uint64_t k_desc) {
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < kHeadDim / 16; ++ks) wgmma_ss<kBlockN>(s, q_desc + 2 * ks, k_desc + 2 * ks, ks);
  wgmma_commit();
}

// O += P·V: one m64n64k16 a 16-key step, P from registers, V 16 rows (2048 bytes, +128 in the
// descriptor's address field) on a step.
template <int kBlockN>
__device__ __forceinline__ void issue_pv(float (&o)[kHeadDim / 2], const uint32_t (&p)[kBlockN / 16][4],
                                         uint64_t v_desc) {
  wgmma_fence();
#pragma unroll
  for (int j = 0; j < kBlockN / 16; ++j) wgmma_rs_n64(o, p[j], v_desc + j * (16 * kRowBytes >> 4));
  wgmma_commit();
}

// One tile's online softmax: the mask where the tile reaches the diagonal (or T), the new running
// max, P in bf16 (the A fragments of P·V), the running sum, O rescaled. In raw-score units: m is the
// running max of q·k, the scale folded into each exponential's FFMA (exp2(s·c - m·c), c = log2(e)
// / sqrt(hd)). Every row sees key 0 in its first tile, so m is finite from then on: a masked score
// gives exp2(-inf) = 0, and the first tile's rescale exp2(-inf) = 0 multiplies zeros.
template <int kBlockN>
__device__ __forceinline__ void softmax_tile(float (&s)[kBlockN / 2], uint32_t (&p)[kBlockN / 16][4],
                                             float (&o)[kHeadDim / 2], float (&m)[2], float (&l)[2], int k0,
                                             const Rows& rows, float scale_log2) {
  if (k0 + kBlockN > rows.first) {
    const int last[2] = {rows.last0 - k0, rows.last1 - k0};
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i)
      if ((i / 4) * 8 + (i & 1) > last[(i >> 1) & 1]) s[i] = -INFINITY;
  }
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int i = 0; i < kBlockN / 2; ++i) tile_max[(i >> 1) & 1] = fmaxf(tile_max[(i >> 1) & 1], s[i]);
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // a row's max over the 4 lanes that hold it
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
  }
  // The running max moves only when a row's max rose by more than kLazyLog2 (2^8: the exponentials
  // stay below 256 and the sums far inside fp32); then the whole warp rescales, else O and l keep
  // their scale and the rescale's 32 multiplies are skipped. The result is the same: the max only
  // has to keep exp2 in range.
  const bool grow = (tile_max[0] - m[0]) * scale_log2 > kLazyLog2 || (tile_max[1] - m[1]) * scale_log2 > kLazyLog2;
  if (__any_sync(0xffffffffu, grow)) {
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m_new = fmaxf(m[r], tile_max[r]);
      alpha[r] = exp2_approx((m[r] - m_new) * scale_log2);
      m[r] = m_new;
      l[r] *= alpha[r];
    }
#pragma unroll
    for (int i = 0; i < kHeadDim / 2; ++i) o[i] *= alpha[(i >> 1) & 1];
  }
  const float m_scaled[2] = {m[0] * scale_log2, m[1] * scale_log2};
#pragma unroll
  for (int j = 0; j < kBlockN / 16; ++j) {
    float e[8];
#pragma unroll
    for (int x = 0; x < 8; ++x) {
      e[x] = exp2_approx(fmaf(s[8 * j + x], scale_log2, -m_scaled[(x >> 1) & 1]));
      l[(x >> 1) & 1] += e[x];
    }
    p[j][0] = pack_bf16(e[0], e[1]);
    p[j][1] = pack_bf16(e[2], e[3]);
    p[j][2] = pack_bf16(e[4], e[5]);
    p[j][3] = pack_bf16(e[6], e[7]);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <int kBlockM, int kBlockN, int kStages, int kMinBlocks>
__global__ void __launch_bounds__(kBlockM * 2, kMinBlocks)
    attention_kernel(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ qkv, int T, int H,
                     float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t q_s = (static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;
  const uint32_t ring = q_s + Cfg::kQBytes;  // stage i: K at ring + i·kStageBytes, V kTileBytes on

  const int bh = blockIdx.x, b = bh / H, h = bh % H;
  const int q0 = (gridDim.y - 1 - blockIdx.y) * kBlockM;  // the longest query tiles first, over every head
  const int C = H * kHeadDim;
  const int64_t row_stride = 3 * int64_t{C};
  const __nv_bfloat16* q_base = qkv + int64_t{b} * T * row_stride + h * kHeadDim;
  const __nv_bfloat16* k_base = q_base + C;
  const __nv_bfloat16* v_base = q_base + 2 * C;
  const int tiles = min(q0 + kBlockM - 1, T - 1) / kBlockN + 1;

  const int wg = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int row_g = q0 + wg * 64 + warp * 16 + g;  // this thread's rows: row_g and row_g + 8

  // The prologue: Q and the first kStages - 1 tiles, one commit group a tile (Q rides with tile 0).
  TileCopy<kBlockN, Cfg::kThreads> k_copy(k_base, row_stride), v_copy(v_base, row_stride);
  TileCopy<kBlockM, Cfg::kThreads>(q_base, row_stride, q0).start(q_s, q0, T);
#pragma unroll
  for (int i = 0; i < kStages - 2; ++i) prefetch<Cfg, kBlockN, kStages>(ring, k_copy, v_copy, i, tiles, T);

  const uint64_t q_desc = descriptor(q_s + wg * 64 * kRowBytes);
  const uint64_t ring_desc = descriptor(ring);  // a stage's K: + stage·kStageBytes >> 4; its V: + kTileBytes >> 4
  auto k_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes >> 4); };
  auto v_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes + Cfg::kTileBytes >> 4); };
  float o[kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < kHeadDim / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY};  // running max of the scores of rows row_g and row_g + 8
  float l[2] = {0.f, 0.f};              // running sum of exponentials (this thread's share)
  const int wg_last_row = q0 + wg * 64 + 63;
  const Rows rows{min(row_g, T - 1) - 2 * t, min(row_g + 8, T - 1) - 2 * t, q0 + wg * 64 + warp * 16};

  // P·V of tile kt is waited for only after S of tile kt + 1 is issued, so its latency hides
  // behind the barrier, the copies and the next product. It still reads its stage then: the copies
  // run kStages - 2 tiles ahead, leaving that stage alone until the barrier after.
  static_assert(kStages >= 3, "a stage for the P·V still running");
  uint32_t p[kBlockN / 16][4];  // read by the running P·V until the next wait
  for (int kt = 0; kt < tiles; ++kt) {
    cp_async_wait<kStages - 3>();  // tile kt (and Q) landed, this thread's copies
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();  // everyone's copies; every P·V of tile kt - 2 is done: its stage is free
    prefetch<Cfg, kBlockN, kStages>(ring, k_copy, v_copy, kt + kStages - 2, tiles, T);
    const int k0 = kt * kBlockN;
    if (k0 > wg_last_row) {  // every key of the tile is in this warpgroup's future
      wgmma_wait<0>();       // P·V of tile kt - 1 done by the end of tile kt, as below
      continue;
    }
    float s[Cfg::kAccS];
    issue_scores<kBlockN>(s, q_desc, k_desc(kt));
    wgmma_wait<0>();  // S of tile kt, and P·V of tile kt - 1 before it
    fence_registers(s);
    fence_registers(o);
    fence_registers(p);
    softmax_tile<kBlockN>(s, p, o, m, l, k0, rows, scale_log2);
    issue_pv<kBlockN>(o, p, v_desc(kt));
  }
  wgmma_wait<0>();
  fence_registers(o);
  fence_registers(p);
  cp_async_wait<0>();  // no copy outlives the block (the trailing groups are empty)

  store_rows<kHeadDim>(out + int64_t{b} * T * C + h * kHeadDim + 2 * t, C, l, row_g, T,
                       [&](int j, int e) { return o[4 * j + e]; });
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// One configuration of the kernel: its shared memory, the opt-in, the launch.
template <int kBlockM, int kBlockN, int kStages, int kMinBlocks>
struct Variant {
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  static constexpr auto kernel = attention_kernel<kBlockM, kBlockN, kStages, kMinBlocks>;
  static constexpr int kSmemBytes = Cfg::kSmemBytes;
  static void prepare() {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  }
  static void launch(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
    if (B * T == 0) return;
    const dim3 grid(B * H, ceil_div(T, kBlockM));
    const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));  // log2(e) / sqrt(hd)
    kernel<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(static_cast<__nv_bfloat16*>(out),
                                                        static_cast<const __nv_bfloat16*>(qkv), T, H, scale_log2);
    CUDA_CHECK_LAUNCH();
  }
};

// The two configurations production runs (measured on an H100: docs/history/gpt2-notes.md,
// "A Hopper attention core: measured"). Wide: two warpgroups of 64 query rows share each 64-key
// tile (half the K/V traffic of Narrow), four stages, two blocks an SM: 44.9 us at GPT-2's B8
// T1024. Narrow: one warpgroup a block, 128-key tiles, so that a grid too small to fill the card
// twice balances its long causal rows over more, shorter blocks: 13.6 us at B1 T1024 against
// Wide's 17.2.
using Wide = Variant<128, 64, 4, 2>;
using Narrow = Variant<64, 128, 3, 2>;

// Narrow where Wide's grid is under one wave of its two blocks an SM (GPT-2 at T1024 on an H100:
// B1 and B2 ran faster narrow, B4, B8 and B16 wide).
bool narrow(int B, int T, int H, int sms) {
  const int64_t wide_blocks = int64_t{B} * H * ceil_div(T, 128);
  return wide_blocks < 2 * int64_t{sms};
}

}  // namespace

std::string refusal(int head_dim, int device) {
  if (head_dim != kHeadDim)
    return "the wgmma attention core is built for head size " + std::to_string(kHeadDim) + ", not " +
           std::to_string(head_dim) + ".";
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int need = std::max(Wide::kSmemBytes, Narrow::kSmemBytes);
  if (need > optin)
    return "the wgmma attention core needs " + std::to_string(need) + " bytes of shared memory a block; this " +
           "device allows " + std::to_string(optin) + ".";
  return "";
}

void prepare() {
  Wide::prepare();
  Narrow::prepare();
}

void forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
  int device = 0, sms = 0;  // host queries: nothing is enqueued
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (narrow(B, T, H, sms))
    Narrow::launch(out, qkv, B, T, H, stream);
  else
    Wide::launch(out, qkv, B, T, H, stream);
}

}  // namespace laptime::flash_sm90
