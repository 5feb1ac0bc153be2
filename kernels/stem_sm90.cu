// The fused stem on wgmma (sm_90a): conv (4×4 stride 1 on the space-to-depth input) + bias + ReLU
// + 3×3/2 max pool, bf16 storage, fp32 accumulation. The work cut (units, steps, the ring of five
// conv rows, double-buffered input rows, the pool phase) is kernels/stem.cu's, unchanged
// (kernels/stem_common.cuh); only the implicit GEMM and the layout it reads differ.
//
// The GEMM, transposed. kernels/stem.cu computes Y[pixel][channel] with mma.sync; here the 64
// output channels are wgmma's M and the pixels its N:
//   Yᵀ[o][px] = Σ_{ks<16} Σ_{c<16} W[o][16·ks + c] · s2d[px + a·Hs + b][c],  ks = 4a + b.
// Why this way round. (1) The weights (64 × 256 bf16, 32 KB) are the A operand, held in registers
// for the whole kernel (64 a thread: the m64k16 fragment of each of the 16 k-steps) and never in
// shared memory. (2) Only the pixels come from shared memory, as wgmma's B: per m64n112k16, 3.5 KB
// for 112 clocks of the tensor core at its peak rate, half of shared memory's 128 B a clock. With
// the pixels as M and N = 64 channels both operands would stream from shared memory, 4 KB for 32
// clocks: shared memory would be the limit. (3) 64 channels are one M of 64: one instruction a k-step.
//
// The implicit GEMM is a shift. A step's staged s2d rows lo .. hi+2 lie flat in shared memory,
// pixel i = row·Hs + column, and conv output (r, x) is flat pixel m = r·Hs + x of the same layout:
// tap (a, b) reads flat pixel m + a·Hs + b. So for each k-step the B operand is the staged input
// itself, offset by a·Hs + b pixels: no im2col, no index math, one descriptor a k-step. A chunk
// is 112 pixels of one conv row (one chunk a row at 224, So = 112); a shorter row computes
// garbage columns past So that are never stored, their reads inside the buffer (128 pixels of
// slack), and a garbage pixel's column of Yᵀ depends on its own pixel only.
//
// The layout wgmma reads: no swizzle ("interleave"), K-major. A core matrix is 8 rows (pixels) of
// 16 bytes (8 channels) stored contiguously, 128 bytes; the 8-pixel groups along N are SBO = 128
// bytes apart (consecutive pixels), and the two 8-channel halves of a k-step LBO = one plane apart
// (cute/atom/mma_traits_sm90_gmma.hpp's canonical K-major INTERLEAVE layout
// ((8,n),2):((1,SBO),LBO) in 16-byte units). Hence each staged buffer is two planes, channels 0-7
// and 8-15, each [pixel] × 16 bytes: a descriptor's start may sit at any pixel (16-byte aligned),
// which is what makes the shift free. A core matrix's 8 rows are 128 contiguous bytes: all 32
// banks, no conflict.
//
// Fragments (PTX ISA, wgmma "Register Fragments"; warp w of the warpgroup, lane = 4g + t):
//   A (registers), per k-step: a[0] = W[16w+g][2t, 2t+1], a[1] = W[16w+g+8][2t, 2t+1],
//                              a[2] = W[16w+g][2t+8, +9], a[3] = W[16w+g+8][2t+8, +9] (mma.m16n8k16's A)
//   D (fp32, 56 registers):    d[4j + e]: channel 16w + g + 8·(e >> 1), pixel 8j + 2t + (e & 1)
// The accumulators start at the bias. The epilogue is four instructions a pair of values: one
// cvt.rn.relu.bf16x2 (ReLU and the bf16 rounding kernels/stem.cu stores), a shuffle for the pair
// of the neighbour channel (lane ^ 4), a byte permute to one pixel's two channels, and one 4-byte
// store into the ring at an immediate offset (the chunk's row is fixed, its column steps by 8): a
// warp's 32 stores cover 8 pixels × 4 channel pairs, and the ring's 144-byte pixel stride spreads
// them over all 32 banks.
//
// A block is two warpgroups (256 threads), one an SM (144 KB of shared memory at 224: two staged
// buffers of 2 × 16.4 KB and the 79 KB ring). Each takes every other chunk (conv row) of a step:
// 16 wgmma (one a k-step) into one accumulator, then the epilogue; a 4-row step is 4 chunks.
//
// Prediction (H200, B256 at 224; made for the first cut, 120-pixel chunks): 54 steps an SM, each
// 4 chunks × 16 × 64·120·16 MACs at the SM's 2048 bf16 MACs a clock = 3840 clocks (2.1 us at 1.83 GHz); the pool phase and the epilogue stores
// (~0.9 us a step, tensor cores idle) come on top: 54 × 3.0 = 0.16 ms at the peak rate, ~0.20-0.25
// ms at 70% of it, against 0.445 ms for kernels/stem.cu's mma.sync.
// Measured (results/2026-12-02c-stem, `laptime lab stem`): the first cut, 120-pixel chunks of the
// flat pixel index, 385 us. Nsight Compute (B32) put 40% of its warp samples and 7.9 M of 14.6 M
// warp instructions in the epilogue (a row/column walk with a wrap per 8 pixels, the bias add, the
// ReLU, a separate conversion); the tensor-core wait was 10%. One row a chunk and the four-instruction
// epilogue: 246 us (245 TFLOP/s of the 7×7 convolution's work, 1.81x mma.sync), 39.8 us at B32,
// 9.95 at B1. What is left is the pool phase and the barriers between the phases, tensor cores idle.
#include "kernels/stem_sm90.cuh"

#include <cuda_bf16.h>

#include "core/check.h"
#include "kernels/wgmma.cuh"

namespace laptime::stem {
namespace {

constexpr int kThreads = 256;  // two warpgroups
constexpr int kC = kWgmmaChannels;
constexpr int kRingPx = kC + 8;  // ring pixel stride, elements (144 bytes)
constexpr int kN = kWgmmaChunk;  // pixels a chunk
constexpr int kAcc = kN / 2;     // fp32 accumulators a thread
constexpr int kSlack = 128;      // pixels of a plane past the staged rows (≥ kN + 3)

struct Smem {
  int plane, in0, in1, ring, total;
};
__host__ __device__ inline Smem smem_layout(int Hs) {
  Smem s;
  s.plane = round128((kInRows * Hs + kSlack) * 16);
  s.in0 = 0;
  s.in1 = 2 * s.plane;
  s.ring = 4 * s.plane;
  s.total = s.ring + kRing * (Hs - 3) * kRingPx * 2;
  return s;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A shared-memory matrix descriptor: no swizzle, start `addr`, LBO (the K halves) `lbo`, SBO 128.
__device__ __forceinline__ uint64_t descriptor(uint32_t addr, uint32_t lbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(128 >> 4) << 32);
}

// D[64 × 112] += A[64 × 16] (registers) · B[16 × 112] (shared memory, K-major), fp32 += bf16 · bf16.
__device__ __forceinline__ void wgmma_n112(float (&d)[kAcc], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %61, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n112k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55"
      "}, "
      "{%56, %57, %58, %59}, %60, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// This thread's A fragments of all 16 k-steps, once a kernel (W is [64][256] bf16, k contiguous:
// 128 32-bit words a channel; channels o0 and o0 + 8).
__device__ __forceinline__ void load_weights(const StemParams& q, int o0, int t, uint32_t (&wa)[16][4]) {
  const uint32_t* w32 = reinterpret_cast<const uint32_t*>(q.weight);
#pragma unroll
  for (int ks = 0; ks < 16; ++ks) {
    wa[ks][0] = __ldg(w32 + o0 * 128 + ks * 8 + t);
    wa[ks][1] = __ldg(w32 + (o0 + 8) * 128 + ks * 8 + t);
    wa[ks][2] = __ldg(w32 + o0 * 128 + ks * 8 + 4 + t);
    wa[ks][3] = __ldg(w32 + (o0 + 8) * 128 + ks * 8 + 4 + t);
  }
}

// One chunk's implicit GEMM: d (64 channels × 112 pixels from flat pixel m0 of the staged rows at
// in_s) = bias + Σ_ks W_ks · s2d[m0 + a·Hs + b], the accumulators starting at the bias (the
// epilogue adds nothing); returns with the MMA complete.
__device__ __forceinline__ void conv_chunk(float (&d)[kAcc], const uint32_t (&wa)[16][4], const float (&bias)[2],
                                           uint32_t in_s, int m0, int Hs, int plane) {
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = bias[(i >> 1) & 1];
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 16; ++ks)
    wgmma_n112(d, wa[ks], descriptor(in_s + (m0 + (ks >> 2) * Hs + (ks & 3)) * 16, plane));
  wgmma_commit();
  wgmma_wait<0>();
  fence_registers(d);
}

// Starts the copy of s2d rows [lo, hi + 3) of image n into a staged buffer's two planes: 16-byte
// chunk i of the run is pixel i / 2's channel half i % 2. Threads 0-255 (the MMA warpgroups).
__device__ __forceinline__ void load_rows_async(uint32_t buf, int plane, const StemParams& q, const Step& st) {
  const int chunks = (st.hi + 3 - st.lo) * q.Hs * 2;
  const __nv_bfloat16* src = q.in + (static_cast<int64_t>(st.n) * q.Hs + st.lo) * q.Hs * kCin;
  for (int i = threadIdx.x; i < chunks; i += kThreads) cp_async16(buf + (i & 1) * plane + (i >> 1) * 16, src + i * 8);
}

// Before the loop over steps: the first step's rows started into buffer 0, this thread's weight
// fragments (channels o0 and o0 + 8) and their biases loaded.
__device__ __forceinline__ void begin_steps(const StemParams& q, uint32_t smem_base, const Smem& L, const Step& st,
                                            int o0, int t, uint32_t (&wa)[16][4], float (&bias)[2]) {
  load_rows_async(smem_base + L.in0, L.plane, q, st);
  cp_async_commit();
  load_weights(q, o0, t, wa);
  bias[0] = __bfloat162float(q.bias[o0]);
  bias[1] = __bfloat162float(q.bias[o0 + 8]);
}

// A step's top, before its barrier: this thread's copies complete and visible to the tensor
// cores' (async) reads.
__device__ __forceinline__ void rows_landed() {
  cp_async_wait<0>();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// After the step's barrier (everyone done with the other buffer): the next step's rows started
// into it. Returns that step (empty when there is none).
__device__ __forceinline__ Step start_next(const StemParams& q, uint32_t smem_base, const Smem& L, int buf,
                                           const Work& next, bool has_next) {
  Step nx{};
  if (has_next) {
    nx = make_step(q, next.unit, next.s);
    load_rows_async(smem_base + (buf ? L.in0 : L.in1), L.plane, q, nx);
    cp_async_commit();
  }
  return nx;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

__global__ void __launch_bounds__(kThreads, 1) fused_stem_wgmma_kernel(const StemParams q) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) unsigned char smem[];
  const Smem L = smem_layout(q.Hs);
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  __nv_bfloat16* ring = reinterpret_cast<__nv_bfloat16*>(smem + L.ring);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wg = warp >> 2, wq = warp & 3, g = lane >> 2, t = lane & 3, odd = g & 1;
  const int units = q.N * q.bands;
  int unit = blockIdx.x;
  if (unit >= units) return;
  const float out_scale = q.out_inv_scale ? *q.out_inv_scale : 1.f;

  int s = 0, buf = 0;
  Step st = make_step(q, unit, 0);
  const int o0 = 16 * wq + g;
  uint32_t wa[16][4];
  float bias[2];
  begin_steps(q, smem_base, L, st, o0, t, wa, bias);

  while (true) {
    const Work next = next_work(q, unit, s);
    const bool has_next = next.unit < units;
    rows_landed();
    __syncthreads();  // this step's rows in, everyone's; the previous pool done with the ring
    const Step nx = start_next(q, smem_base, L, buf, next, has_next);

    // --- implicit GEMM over this step's conv rows [lo, hi), epilogue into the ring
    const uint32_t in_s = smem_base + (buf ? L.in1 : L.in0);
    // A chunk is kN pixels of one conv row: row r = c / cpr from column x0 (one chunk a row at 224).
    const int rows = st.hi - st.lo, cpr = (q.So + kN - 1) / kN, chunks = rows * cpr;
    for (int c = wg; c < chunks; c += 2) {  // uniform across the warpgroup, as wgmma requires
      const int r = c / cpr, x0 = (c - r * cpr) * kN, m0 = r * q.Hs + x0;
      float d[kAcc];
      conv_chunk(d, wa, bias, in_s, m0, q.Hs, L.plane);

      // ReLU and bf16 in one conversion, pixels 8j + 2t and +1 of channel o0 + 8h packed; the
      // shuffle brings lane ^ 4's pair (channel o0 + 8h ± 1), and the byte permute keeps one
      // pixel's two channels: even g pixel 8j + 2t, channels o0, o0 + 1; odd g pixel 8j + 2t + 1,
      // channels o0 − 1, o0. Columns past So (a row shorter than kN) are not stored.
      const uint32_t sel = odd ? 0x3276u : 0x5410u;
      const int x = x0 + 2 * t + odd, lim = q.So - x;
      __nv_bfloat16* dst = ring + ((st.lo + r) % kRing * q.So + x) * kRingPx + (o0 - odd);
#pragma unroll
      for (int j = 0; j < kN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t mine;
          asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;\n" : "=r"(mine) : "f"(d[4 * j + 2 * h + 1]), "f"(d[4 * j + 2 * h]));
          const uint32_t theirs = __shfl_xor_sync(0xffffffffu, mine, 4);
          if (8 * j < lim) *reinterpret_cast<uint32_t*>(dst + 8 * j * kRingPx + 8 * h) = __byte_perm(mine, theirs, sel);
        }
    }
    __syncthreads();  // the step's conv rows in the ring

    pool_step<kC, kRingPx>(q, st, ring, out_scale, tid, kThreads);
    if (!has_next) break;
    unit = next.unit;
    s = next.s;
    st = nx;
    buf ^= 1;
  }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// --- The pool overlapped (laptime lab's stem v4): a third warpgroup pools step s while the two
// MMA warpgroups compute step s + 1, and those two take the rows in turn at the tensor cores.
//
// What v3 waits on (Nsight Compute, results/2026-12-02d-overlap/archive.tar.xz:c-ncu, B256): the tensor pipe
// busy 44.5% of the cycles, the rest the epilogue and the pool phase, each warp of a warpgroup
// alone on its scheduler and issuing every ~6 cycles (0.41 eligible warps a scheduler). v4 moves
// the pool to its own warpgroup and orders the MMA warpgroups ping-pong (warpgroup 0 the even
// rows, 1 the odd ones, a TURN barrier each way: a warpgroup issues row r once row r − 1's MMA is
// done), so that one's epilogue runs under the other's MMA. That pays only if the epilogue is no
// longer than a row's MMA (16 × m64n112k16, ~900 cycles): its shuffles are gone. Each value pair
// (pixels 2t and 2t + 1 of one channel, ReLU and bf16 in one cvt) is stored as two 2-byte stores
// into v3's ring layout, where the pool warpgroup reads it as v3's pool phase does. A first cut
// that pooled along the row in the epilogue (three shuffles a group) ran 282 us against v3's 248:
// its epilogue, ~240 instructions a row at ~9 cycles each, was longer than the MMA it hid under.
// This version measured 258.6 us against v3's 248.8 (call D): still slower, so fused_stem_plan
// keeps v3 and this core runs only when asked for (FusedStemCore::Overlap, `--kernel stem=v4`).
// What it leaves: each warp is still alone on its scheduler, and the pool warpgroup's 128
// threads take v3's pool phase at half its threads; the tensor pipe's 45% is the number to move.
//
// The ring is nine rows, addressed by position (rows in the order the block computes them, across
// its units), not by conv row: the pool of step s reads at most the five positions pos_s − 1 ..
// pos_s + 3 and step s + 1 writes the four after them. The first step of a unit writes five rows
// (its window's first): it waits until the pool of the step before is done. Named barriers order
// the two roles, one pair for each parity of the step count k: FULL(k) (MMA arrives after its
// epilogue stores, the pool waits) and EMPTY(k) (the pool arrives after pooling; MMA consumes
// them in order, step k needing k − 2 done, a unit's first step k − 1). A barrier of one parity is
// never arrived at twice before it completes: MMA's FULL(k + 2) comes after it consumed EMPTY(k),
// which comes after the pool passed FULL(k), and the pool's EMPTY(k + 2) after FULL(k + 2).
constexpr int kThreadsOv = 384;  // MMA warpgroups 0 and 1, the pool's warpgroup 2
constexpr int kRingOv = 9;       // ring positions
// 0 is __syncthreads'; FULL 2-3, EMPTY 4-5; TURN0 (warpgroup 0's row has left the tensor cores,
// warpgroup 1 may issue) and TURN1 the other way.
enum : int { kBarMma = 1, kBarFull = 2, kBarEmpty = 4, kBarTurn0 = 6, kBarTurn1 = 7 };

__host__ __device__ inline Smem smem_layout_ov(int Hs) {
  Smem s = smem_layout(Hs);
  s.total = s.ring + kRingOv * (Hs - 3) * kRingPx * 2;
  return s;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The ring slot of conv row r of a step whose first row st.lo is at position pos (the step
// before's last row, r = st.lo − 1, at pos − 1).
struct SlotByPosition {
  int pos, lo;
  __device__ __forceinline__ int operator()(int r) const { return (pos + r - lo + kRingOv) % kRingOv; }
};
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

__global__ void __launch_bounds__(kThreadsOv, 1) fused_stem_wgmma_ov_kernel(const StemParams q) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) unsigned char smem[];
  const Smem L = smem_layout_ov(q.Hs);
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  __nv_bfloat16* ring = reinterpret_cast<__nv_bfloat16*>(smem + L.ring);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wg = warp >> 2, wq = warp & 3, g = lane >> 2, t = lane & 3;
  const int units = q.N * q.bands;
  int unit = blockIdx.x, s = 0, k = 0, pos = 0;  // k: steps done by this block; pos: ring rows written
  if (unit >= units) return;
  Step st = make_step(q, unit, 0);

  if (wg == 2) {  // the pool's warpgroup
    const float out_scale = q.out_inv_scale ? *q.out_inv_scale : 1.f;
    while (true) {
      bar_sync(kBarFull + (k & 1), kThreadsOv);
      pool_step<kC, kRingPx>(q, st, ring, out_scale, tid - 256, 128, SlotByPosition{pos, st.lo});
      bar_arrive(kBarEmpty + (k & 1), kThreadsOv);
      const Work next = next_work(q, unit, s);
      if (next.unit >= units) return;
      pos += st.hi - st.lo;
      unit = next.unit;
      s = next.s;
      st = make_step(q, unit, s);
      ++k;
    }
  }

  int buf = 0, freed = 0;  // freed: the pool's steps whose EMPTY this role has consumed
  const int o0 = 16 * wq + g;
  uint32_t wa[16][4];
  float bias[2];
  begin_steps(q, smem_base, L, st, o0, t, wa, bias);

  while (true) {
    const Work next = next_work(q, unit, s);
    const bool has_next = next.unit < units;
    rows_landed();
    bar_sync(kBarMma, 256);  // this step's rows in; both MMA warpgroups done with the other buffer
    const Step nx = start_next(q, smem_base, L, buf, next, has_next);
    // The ring positions this step writes, free: step k − 2's pool done (k − 1's for a unit's
    // first step, which writes a fifth row).
    const int need = s == 0 ? k - 1 : k - 2;
    for (; freed <= need; ++freed) bar_sync(kBarEmpty + (freed & 1), kThreadsOv);

    const uint32_t in_s = smem_base + (buf ? L.in1 : L.in0);
    const int chunks = st.hi - st.lo;
    for (int r = wg; r < chunks; r += 2) {  // uniform across the warpgroup, as wgmma requires
      if (r > 0) bar_sync(wg ? kBarTurn0 : kBarTurn1, 256);
      float d[kAcc];
      conv_chunk(d, wa, bias, in_s, r * q.Hs, q.Hs, L.plane);
      if (r + 1 < chunks) bar_arrive(wg ? kBarTurn1 : kBarTurn0, 256);
      // Pixels 8j + 2t and + 1 of channels o0 + 8h: ReLU and bf16 in one conversion, then each
      // half stored on its own (two 2-byte stores, no shuffle); columns past So are not stored.
      uint16_t* dst = reinterpret_cast<uint16_t*>(ring + ((pos + r) % kRingOv * q.So + 2 * t) * kRingPx + o0);
      const int lim = q.So - 2 * t;
#pragma unroll
      for (int j = 0; j < kN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t v;
          asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;\n" : "=r"(v) : "f"(d[4 * j + 2 * h + 1]), "f"(d[4 * j + 2 * h]));
          if (8 * j < lim) dst[8 * j * kRingPx + 8 * h] = static_cast<uint16_t>(v);
          if (8 * j + 1 < lim) dst[(8 * j + 1) * kRingPx + 8 * h] = static_cast<uint16_t>(v >> 16);
        }
    }
    bar_arrive(kBarFull + (k & 1), kThreadsOv);  // the step's rows in the ring, for the pool
    if (!has_next) break;
    pos += st.hi - st.lo;
    unit = next.unit;
    s = next.s;
    st = nx;
    buf ^= 1;
    ++k;
  }
  // The pool's remaining arrivals, consumed: no barrier is left part-arrived at exit.
  for (; freed <= k; ++freed) bar_sync(kBarEmpty + (freed & 1), kThreadsOv);
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

using StemKernel = void (*)(StemParams);

// The shared-memory opt-in of `kernel` (to `optin` bytes); returns the blocks an SM holds at `bytes`.
int prepare_kernel(StemKernel kernel, int threads, int optin, int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, bytes));
  return n;
}

void launch_kernel(StemKernel kernel, int threads, const StemParams& q, int grid, int smem_bytes, cudaStream_t stream) {
  kernel<<<grid, threads, smem_bytes, stream>>>(q);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int wgmma_smem_bytes(int Hs) { return smem_layout(Hs).total; }
int wgmma_prepare(int optin, int bytes) { return prepare_kernel(fused_stem_wgmma_kernel, kThreads, optin, bytes); }
void wgmma_launch(const StemParams& q, int grid, int smem_bytes, cudaStream_t stream) {
  launch_kernel(fused_stem_wgmma_kernel, kThreads, q, grid, smem_bytes, stream);
}

int overlap_smem_bytes(int Hs) { return smem_layout_ov(Hs).total; }
int overlap_prepare(int optin, int bytes) {
  return prepare_kernel(fused_stem_wgmma_ov_kernel, kThreadsOv, optin, bytes);
}
void overlap_launch(const StemParams& q, int grid, int smem_bytes, cudaStream_t stream) {
  launch_kernel(fused_stem_wgmma_ov_kernel, kThreadsOv, q, grid, smem_bytes, stream);
}

}  // namespace laptime::stem
