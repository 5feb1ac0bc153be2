// ResNet's stem, fused: conv (4×4 stride 1 on the space-to-depth input) + bias + ReLU + 3×3/2
// max pool, bf16 storage, fp32 accumulation, tensor cores through mma.sync (sm_80+).
//
// The GEMM. For conv output pixel (r, x) of one image and output channel o,
//   y[r, x, o] = Σ_{a,b<4, c<16} s2d[r + a, x + b, c] · w[o, a, b, c]
// is an implicit GEMM with M = pixels, N = Cout, K = 4·4·16 = 256, k = (4a + b)·16 + c. For a
// fixed k-step ks = 4a + b (16 wide) the A row of pixel (r, x) is s2d[r + a][x + b][0..15]: 32
// contiguous bytes, so ldmatrix reads A straight out of the staged input rows (no im2col).
//
// Fragments of mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA, "Matrix Fragments
// for mma.m16n8k16 with floating point type"), lane = 4·g + t (g = groupID = lane / 4, t = lane % 4):
//   A 16×16 row-major, 4 registers of 2 bf16:  a[0] = A[g][2t, 2t+1]       a[1] = A[g+8][2t, 2t+1]
//                                              a[2] = A[g][2t+8, 2t+9]     a[3] = A[g+8][2t+8, 2t+9]
//   B 16×8 "col", 2 registers:                 b[0] = B[2t, 2t+1][g]       b[1] = B[2t+8, 2t+9][g]
//   C/D 16×8 fp32, 4 registers:                c[0], c[1] = C[g][2t, 2t+1]  c[2], c[3] = C[g+8][2t, 2t+1]
// ldmatrix.m8n8.x4 gives lane 4·g + t of matrix j the pair (row g, columns 2t, 2t+1) in register
// j; lanes 8j..8j+7 supply the row addresses of matrix j. Hence:
//   A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
//      -> lane l addresses pixel row (l & 15), k half (l >> 4): registers land as a[0..3] above.
//   B: the weights are W[o][k] (k contiguous) = Bᵀ row-major, so an 8×8 matrix "row" is one
//      output channel: (n-tile j, k 0-7), (j, k 8-15), (j+1, k 0-7), (j+1, k 8-15)
//      -> lane l addresses channel 8j + (l & 7) + 8·(l >> 4), k half (l >> 3) & 1: registers
//      {r0, r1} = b[0..1] of tile j, {r2, r3} = of tile j+1.
//
// A block (8 warps, persistent: one or two per SM, looping over work units) stages the 32 KB of
// weights once. A unit is a band of pooled rows of one image; it runs in steps of two pooled
// rows p, p+1, which need conv rows 2p−1 .. 2p+3. Row 2p−1 was computed by the step before
// (a ring of 5 conv rows in shared memory, row r in slot r % 5), so a step computes 4 new conv
// rows (5 in a band's first step; only the band's first row is computed twice, by its
// neighbour too), from s2d rows lo .. hi+2 (≤ 8 rows × Hs × 32 bytes, cp.async, double-buffered:
// the next step's rows load while this one computes). The step's M = rows × So pixels is cut in
// chunks of 112 pixels (7 m16 tiles, one conv row at 224) × half the channels (32 of 64): 8
// warp tasks per 4-row step at 224, 2 per SM sub-partition. Epilogue: bias + ReLU in fp32,
// rounded to bf16 (as the unfused path stores it), into the ring; then every thread takes
// 8 channels of one pooled pixel, max over the clipped window (padding never wins: ReLU ≥ 0
// and every window holds a real pixel, so the max over real pixels only is PyTorch's), and
// stores 16 bytes, coalesced.
//
// Bank conflicts: input pixels are 32 bytes, so 8 consecutive pixels of one ldmatrix phase
// would hit each 16-byte bank group twice; the two halves of pixel x swap when bit 2 of x is
// set. Weight rows are 512 bytes (all in one bank group): 16-byte chunk c of channel o sits at
// c ^ (o & 7). Ring pixels are padded to Cout + 8 channels (144 bytes at 64) so the epilogue's
// 4-byte stores of 8 pixels × 4 channel pairs spread over all 32 banks.
//
// Prediction (H200, bf16, 224): B256 computes 2·256·112²·64·256 = 105 GFLOP (the zero taps of
// the 8×8-padded kernel included) and moves 108 MB of s2d input + 103 MB of pooled output:
// 44 µs of HBM at 4.8 TB/s, so it is compute-bound. mma.sync reaches ~60–65% of the H200's
// 989 TFLOP/s dense bf16; each k-step a warp issues 28 mma for 9 ldmatrix.x4 (4.6 KB), which
// keeps shared memory ~85% busy, and the pool phase (tensor cores idle, ~10% of a step) comes
// on top: expect ~300 TFLOP/s in the MMA phase, ~0.35–0.40 ms at B256 (2 waves of 1 image per
// block, 97% of the SMs busy) against 0.649 + 0.209 ms for cuDNN's conv and our max pool. At
// B32: 4 bands per image, 128 units in one wave (8 steps' time for 6.8 of ideal work), ~55–65 µs
// against 90 + 32 µs.
//
// Measured (H200, docs/history/baselines.md, run 3): 0.538 ms at B256 at first. Nsight Compute: 245 registers
// and 172.5 KB of shared memory give one block an SM, two warps a scheduler; the tensor pipe was
// active 29.5% of the time, stalls mostly fixed-latency dependencies and shared-memory results,
// 6.7 instructions a HMMA. Taking the run-time divisions out (m / So, px % Hs) and clamping the
// pool taps (no loop over a clipped window) cut 15% of the instructions: 0.470 ms. The rest is
// latency at two warps a scheduler; wgmma (asynchronous, operands in shared memory) is the
// Hopper way past it: kernels/stem_sm90.cu (246 us at B256), chosen by fused_stem_plan on sm_90.
#include "kernels/stem.cuh"

#include <cuda_bf16.h>

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/pooling.cuh"
#include "kernels/sm90a.h"
#include "kernels/stem_common.cuh"
#include "kernels/stem_sm90.cuh"

namespace laptime {
namespace {

using namespace stem;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kMTiles = 7;            // m16 tiles per warp task: 112 pixels
constexpr int kChunk = kMTiles * 16;  // pixels per warp task
constexpr int kWRowBytes = kK * 2;    // 512: one output channel's weights

// Shared memory of one block, byte offsets.
struct StemSmem {
  int bias, in0, in1, ring, total;
};
__host__ __device__ inline StemSmem stem_smem(int C, int Hs) {
  StemSmem s;
  s.bias = C * kWRowBytes;  // the weights first, [C][256] swizzled
  s.in0 = s.bias + round128(C * 4);
  const int in_bytes = round128(kInRows * Hs * kPixelBytes);
  s.in1 = s.in0 + in_bytes;
  s.ring = s.in1 + in_bytes;
  s.total = s.ring + kRing * (Hs - 3) * (C + 8) * 2;
  return s;
}

// Shared byte offset of the 16-byte half `h` (channels 8h..8h+7) of s2d pixel x in a staged row.
__host__ __device__ inline int in_offset(int x, int h) { return x * kPixelBytes + ((h ^ ((x >> 2) & 1)) << 4); }
// ... of 16-byte chunk c (k = 8c .. 8c+7) of output channel o's weights.
__host__ __device__ inline int w_offset(int o, int c) { return o * kWRowBytes + ((c ^ (o & 7)) << 4); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}
__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Starts the copy of s2d rows [lo, hi + 3) of image n into a staged-input buffer. The rows are
// contiguous in memory: 16-byte chunk i is pixel i / 2 of the run, half i % 2. A thread's column
// x = px % Hs is stepped along with px, not divided out at every chunk.
__device__ __forceinline__ void load_rows_async(uint32_t buf, const StemParams& q, const Step& st) {
  const int chunks = (st.hi + 3 - st.lo) * q.Hs * 2;
  const __nv_bfloat16* src = q.in + (static_cast<int64_t>(st.n) * q.Hs + st.lo) * q.Hs * kCin;
  const int h = threadIdx.x & 1;  // the same half at every chunk: kThreads is even
  int px = threadIdx.x >> 1, x = px % q.Hs;
  for (int i = threadIdx.x; i < chunks; i += kThreads) {
    cp_async16(buf + (px - x) * kPixelBytes + in_offset(x, h), src + i * 8);
    px += kThreads / 2;
    x += kThreads / 2;
    while (x >= q.Hs) x -= q.Hs;
  }
}

// m / So for a pixel m of one step's conv rows (at most kRing of them, so m < kRing·So), by
// comparisons: a division by a run-time divisor is ~20 instructions, and the k loop and the
// epilogue ask for one per m16 tile row.
__device__ __forceinline__ int step_row(int m, int So) {
  int r = 0;
#pragma unroll
  for (int k = 1; k < kRing; ++k) r += m >= k * So;
  return r;
}

// NT n8 tiles = C / 8 output channels. Warp tasks split them in NSPLIT halves of NTW tiles.
template <int NT>
__global__ void __launch_bounds__(kThreads, 1) fused_stem_kernel(const StemParams q) {
  constexpr int C = NT * 8;
  constexpr int NSPLIT = NT % 2 == 0 ? 2 : 1;
  constexpr int NTW = NT / NSPLIT;
  constexpr int kRingPx = C + 8;  // ring pixel stride, elements
  extern __shared__ __align__(128) unsigned char smem[];
  const StemSmem L = stem_smem(C, q.Hs);
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t w_s = smem_base;
  float* bias_s = reinterpret_cast<float*>(smem + L.bias);
  __nv_bfloat16* ring = reinterpret_cast<__nv_bfloat16*>(smem + L.ring);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int units = q.N * q.bands;
  int unit = blockIdx.x;
  if (unit >= units) return;
  const float out_scale = q.out_inv_scale ? *q.out_inv_scale : 1.f;

  // Weights (swizzled) and bias, once per block; the first step's rows in the same group.
  for (int i = tid; i < C * (kK / 8); i += kThreads) {
    const int o = i / (kK / 8), c = i % (kK / 8);
    cp_async16(w_s + w_offset(o, c), q.weight + o * kK + c * 8);
  }
  for (int i = tid; i < C; i += kThreads) bias_s[i] = __bfloat162float(q.bias[i]);
  int s = 0, buf = 0;
  Step st = make_step(q, unit, 0);
  load_rows_async(smem_base + L.in0, q, st);
  cp_async_commit();

  const int g = lane >> 2, t = lane & 3;
  const int a_half = lane >> 4;                        // A: k half this lane addresses
  const int b_chan = (lane & 7) + ((lane >> 4) << 3);  // B (x4): channel offset within a tile pair
  const int b_half = (lane >> 3) & 1;                  // B: k half
  const int row_bytes = q.Hs * kPixelBytes;

  while (true) {
    const Work next = next_work(q, unit, s);
    const bool has_next = next.unit < units;
    cp_async_wait<0>();
    __syncthreads();  // this step's rows (and the weights) in; the previous pool done with the ring
    Step nx{};
    if (has_next) {
      nx = make_step(q, next.unit, next.s);
      load_rows_async(smem_base + (buf ? L.in0 : L.in1), q, nx);
      cp_async_commit();
    }

    // --- implicit GEMM over this step's conv rows [lo, hi), epilogue into the ring
    const uint32_t in_s = smem_base + (buf ? L.in1 : L.in0);
    const int M = (st.hi - st.lo) * q.So;
    const int tasks = (M + kChunk - 1) / kChunk * NSPLIT;
    for (int task = warp; task < tasks; task += kWarps) {
      const int m0 = task / NSPLIT * kChunk, j0 = task % NSPLIT * NTW;
      // This lane's A row of each m tile: its pixel (clamped into the step: the rows past M
      // compute garbage that is never stored), as a staged row's base and a column.
      uint32_t a_row[kMTiles];
      int a_x[kMTiles];
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        const int m = min(m0 + 16 * i + (lane & 15), M - 1);
        const int ro = step_row(m, q.So);
        a_x[i] = m - ro * q.So;
        a_row[i] = in_s + ro * row_bytes;
      }
      float acc[kMTiles][NTW][4];
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int j = 0; j < NTW; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

            // k-steps ks = 4a + b; the a loop stays rolled (all 16 unrolled kept ~30 more registers
            // of precomputed addresses live and left no headroom at 64 channels).
#pragma unroll 1
      for (int a = 0; a < kFusedStemKernel; ++a)
#pragma unroll
        for (int b = 0; b < kFusedStemKernel; ++b) {
          const int ks = 4 * a + b;
          uint32_t bf[NTW][2];
#pragma unroll
          for (int j = 0; j + 1 < NTW; j += 2) {
            uint32_t r[4];
            ldmatrix_x4(r, w_s + w_offset(8 * (j0 + j) + b_chan, 2 * ks + b_half));
            bf[j][0] = r[0];
            bf[j][1] = r[1];
            bf[j + 1][0] = r[2];
            bf[j + 1][1] = r[3];
          }
          if constexpr (NTW % 2 == 1)  // the odd last tile: lanes 0-15 address it
            ldmatrix_x2(bf[NTW - 1][0], bf[NTW - 1][1],
                        w_s + w_offset(8 * (j0 + NTW - 1) + (lane & 7), 2 * ks + b_half));
#pragma unroll
          for (int i = 0; i < kMTiles; ++i) {
            uint32_t af[4];
            ldmatrix_x4(af, a_row[i] + a * row_bytes + in_offset(a_x[i] + b, a_half));
#pragma unroll
            for (int j = 0; j < NTW; ++j) mma_bf16(acc[i][j], af, bf[j][0], bf[j][1]);
          }
        }

        // Epilogue: lane holds pixels m0 + 16i + g (+ 8), channels 8j + 2t (+ 1).
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int m = m0 + 16 * i + g + 8 * hr;
          if (m >= M) continue;
          const int ro = step_row(m, q.So), x = m - ro * q.So;
          __nv_bfloat16* dst = ring + ((st.lo + ro) % kRing * q.So + x) * kRingPx;
#pragma unroll
          for (int j = 0; j < NTW; ++j) {
            const int ch = 8 * (j0 + j) + 2 * t;
            const float v0 = fmaxf(acc[i][j][2 * hr] + bias_s[ch], 0.f);
            const float v1 = fmaxf(acc[i][j][2 * hr + 1] + bias_s[ch + 1], 0.f);
            *reinterpret_cast<__nv_bfloat162*>(dst + ch) = __floats2bfloat162_rn(v0, v1);
          }
        }
    }
    __syncthreads();  // the step's conv rows in the ring

    // --- 3×3/2 max pool of pooled rows [p, pe)
    pool_step<C, kRingPx>(q, st, ring, out_scale, tid, kThreads);
    if (!has_next) break;
    unit = next.unit;
    s = next.s;
    st = nx;
    buf ^= 1;
  }
}

template <int NT>
void set_smem_attribute(int bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(fused_stem_kernel<NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <int NT>
int blocks_per_sm(int bytes) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fused_stem_kernel<NT>, kThreads, bytes));
  return n;
}

// Runs `body` with NT = C / 8 a compile-time constant, NT in 1..8.
#define LAPTIME_STEM_DISPATCH(C, ...)                                                          \
  switch ((C) / 8) {                                                                           \
    case 1: {                                                                                  \
      constexpr int NT = 1;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 2: {                                                                                  \
      constexpr int NT = 2;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 3: {                                                                                  \
      constexpr int NT = 3;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 4: {                                                                                  \
      constexpr int NT = 4;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 5: {                                                                                  \
      constexpr int NT = 5;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 6: {                                                                                  \
      constexpr int NT = 6;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 7: {                                                                                  \
      constexpr int NT = 7;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    case 8: {                                                                                  \
      constexpr int NT = 8;                                                                    \
      __VA_ARGS__;                                                                             \
    } break;                                                                                   \
    default:                                                                                   \
      throw Error("internal: fused stem dispatched with " + std::to_string(C) + " channels."); \
  }

// Time of one unit (a band). mma.sync: in warp tasks per SM sub-partition (tasks are dealt
// round-robin over 8 warps, two per sub-partition) plus a quarter task per step for the pool
// phase. wgmma: in chunks per warpgroup (two take turns at the tensor cores) plus half a chunk
// per step for the pool phase.
double band_cost(const StemParams& q, int band, int nsplit, FusedStemCore core) {
  double cost = 0;
  const int steps = unit_steps(q, band);
  for (int s = 0; s < steps; ++s) {
    const Step st = make_step(q, band, s);
    if (core == FusedStemCore::Overlap) {  // the pool runs under the next step's MMA
      cost += (st.hi - st.lo + 1) / 2 + 0.1;
    } else if (core == FusedStemCore::Wgmma) {
      const int chunks = (st.hi - st.lo) * ((q.So + kWgmmaChunk - 1) / kWgmmaChunk);
      cost += (chunks + 1) / 2 + 0.5;
    } else {
      const int tasks = ((st.hi - st.lo) * q.So + kChunk - 1) / kChunk * nsplit;
      cost += (tasks + 3) / 4 + 0.25;
    }
  }
  return cost;
}

// "" when `need` bytes of shared memory a block fit the device's opt-in, else the sentence for
// `what` ("the fused stem", "the wgmma stem", ...) at s2d side Hs.
std::string smem_refusal(const char* what, int Hs, int need, int optin) {
  if (need <= optin) return "";
  return std::string(what) + " at a " + std::to_string(Hs) + "-pixel space-to-depth side needs " +
         std::to_string(need) + " bytes of shared memory per block, more than the device's " + std::to_string(optin) +
         ".";
}

}  // namespace

std::string fused_stem_refusal(DType dtype, int in_channels, int kernel, int out_channels, int Hs, int smem_optin) {
  if (dtype != DType::BF16) return std::string("the fused stem runs in bf16 only, not ") + dtype_name(dtype) + ".";
  if (in_channels != kCin || kernel != kFusedStemKernel)
    return "the fused stem takes a 4x4 kernel on 16 space-to-depth channels, not " + std::to_string(kernel) + "x" +
           std::to_string(kernel) + " on " + std::to_string(in_channels) + ".";
  if (out_channels % 8 != 0 || out_channels < 8 || out_channels > 64)
    return "the fused stem takes 8 to 64 output channels in steps of 8, not " + std::to_string(out_channels) + ".";
  if (Hs < 4) return "the fused stem needs a space-to-depth side of at least 4, not " + std::to_string(Hs) + ".";
  return smem_refusal("the fused stem", Hs, stem_smem(out_channels, Hs).total, smem_optin);
}

const char* fused_stem_core_name(FusedStemCore core) {
  switch (core) {
    case FusedStemCore::Auto:
      return "auto";
    case FusedStemCore::MmaSync:
      return "mma.sync";
    case FusedStemCore::Wgmma:
      return "wgmma";
    case FusedStemCore::Overlap:
      return "wgmma, pool overlapped";
  }
  return "?";
}

std::string fused_stem_wgmma_refusal(int out_channels, int Hs, int device) {
  if (std::string why = sm90a_refusal("the wgmma stem", device); !why.empty()) return why;
#ifdef LAPTIME_HAVE_SM90A
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (out_channels != kWgmmaChannels)
    return "the wgmma stem takes " + std::to_string(kWgmmaChannels) + " output channels, not " +
           std::to_string(out_channels) + ".";
  return smem_refusal("the wgmma stem", Hs, wgmma_smem_bytes(Hs), optin);
#else
  (void)out_channels;
  (void)Hs;
  return "";  // not reached: sm90a_refusal said why above
#endif
}

std::string fused_stem_overlap_refusal(int out_channels, int Hs, int device) {
  const std::string why = fused_stem_wgmma_refusal(out_channels, Hs, device);
  if (!why.empty()) return why;
#ifdef LAPTIME_HAVE_SM90A
  if (Hs - 3 > kWgmmaChunk)
    return "the overlapped wgmma stem pools one conv row a chunk: a conv side up to " + std::to_string(kWgmmaChunk) +
           " (a space-to-depth side up to " + std::to_string(kWgmmaChunk + 3) + "), not " + std::to_string(Hs - 3) +
           ".";
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return smem_refusal("the overlapped wgmma stem", Hs, overlap_smem_bytes(Hs), optin);
#else
  return "";
#endif
}

FusedStemPlan fused_stem_plan(int N, int Hs, int out_channels, int device, FusedStemCore core) {
  int optin = 0, sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::string why = fused_stem_refusal(DType::BF16, kCin, kFusedStemKernel, out_channels, Hs, optin);
  require(why.empty(), why);
  if (core == FusedStemCore::Overlap) {
    const std::string no = fused_stem_overlap_refusal(out_channels, Hs, device);
    require(no.empty(), no);
  } else if (core != FusedStemCore::MmaSync) {
    const std::string no_wgmma = fused_stem_wgmma_refusal(out_channels, Hs, device);
    require(core == FusedStemCore::Auto || no_wgmma.empty(), no_wgmma);
    // Auto: Wgmma, not Overlap, which measured 4% slower (258.6 against 248.8 us at B256,
    // results/2026-12-02d-overlap call D); Overlap runs when asked (laptime lab stem v4).
    if (core == FusedStemCore::Auto) core = no_wgmma.empty() ? FusedStemCore::Wgmma : FusedStemCore::MmaSync;
  }
  FusedStemPlan plan;
  plan.core = core;
  int per_sm = 0;
  // The opt-in at the device's limit, not at this plan's size: another plan (a larger image) of
  // the same instantiation must not be cut back by this one.
  if (core == FusedStemCore::Wgmma || core == FusedStemCore::Overlap) {
#ifdef LAPTIME_HAVE_SM90A
    const bool ov = core == FusedStemCore::Overlap;
    plan.smem_bytes = ov ? overlap_smem_bytes(Hs) : wgmma_smem_bytes(Hs);
    per_sm = ov ? overlap_prepare(optin, plan.smem_bytes) : wgmma_prepare(optin, plan.smem_bytes);
#endif
  } else {
    plan.smem_bytes = stem_smem(out_channels, Hs).total;
    LAPTIME_STEM_DISPATCH(out_channels, set_smem_attribute<NT>(optin); per_sm = blocks_per_sm<NT>(plan.smem_bytes));
  }
  require(per_sm > 0,
          "the fused stem cannot fit one block on an SM at a " + std::to_string(Hs) + "-pixel space-to-depth side.");
  const int slots = per_sm * sms, So = Hs - 3, Po = pool_out_size(So, 3, 2, 1);
  const int nsplit = (out_channels / 8) % 2 == 0 ? 2 : 1;
  // Bands per image: the fewest that minimise waves × the slowest band. More bands fill the SMs
  // at small batches; each costs one conv row computed twice and a first step of 5 rows.
  double best = 0;
  for (int b = 1; b <= Po; ++b) {
    const int rows = (Po + b - 1) / b, bands = (Po + rows - 1) / rows;
    if (bands != b) continue;  // the same cut as a smaller b
    StemParams q{};
    q.N = N;
    q.Hs = Hs;
    q.So = So;
    q.Po = Po;
    q.bands = bands;
    q.band_rows = rows;
    double slowest = 0;
    for (int band = 0; band < bands; ++band) slowest = std::max(slowest, band_cost(q, band, nsplit, core));
    const int64_t units = int64_t{N} * bands;
    const double cost = static_cast<double>((units + slots - 1) / slots) * slowest;
    if (b == 1 || cost < best) {
      best = cost;
      plan.bands = bands;
      plan.band_rows = rows;
      plan.grid = static_cast<int>(std::min<int64_t>(units, slots));
    }
  }
  return plan;
}

void fused_stem_forward(void* out, const void* in, const void* weight, const void* bias, int N, int Hs, int Cout,
                        const FusedStemPlan& plan, cudaStream_t stream, const float* out_inv_scale) {
  if (N == 0) return;
  StemParams q;
  q.out = out;
  q.out_inv_scale = out_inv_scale;
  q.in = static_cast<const __nv_bfloat16*>(in);
  q.weight = static_cast<const __nv_bfloat16*>(weight);
  q.bias = static_cast<const __nv_bfloat16*>(bias);
  q.N = N;
  q.Hs = Hs;
  q.So = Hs - 3;
  q.Po = pool_out_size(q.So, 3, 2, 1);
  q.bands = plan.bands;
  q.band_rows = plan.band_rows;
  if (plan.core == FusedStemCore::Wgmma || plan.core == FusedStemCore::Overlap) {
#ifdef LAPTIME_HAVE_SM90A
    require(Cout == kWgmmaChannels, "internal: the wgmma stem's plan was made for another width.");
    if (plan.core == FusedStemCore::Overlap)
      overlap_launch(q, plan.grid, plan.smem_bytes, stream);
    else
      wgmma_launch(q, plan.grid, plan.smem_bytes, stream);
    return;
#endif
  }
  LAPTIME_STEM_DISPATCH(Cout, fused_stem_kernel<NT><<<plan.grid, kThreads, plan.smem_bytes, stream>>>(q));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
