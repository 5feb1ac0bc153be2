// Scratch (not in the repository, not yet run on a GPU): the wgmma attention core's Wide
// configuration with its K/V (and Q) loads by TMA into the same 128-byte swizzled stages, each
// stage guarded by two mbarriers (full: the TMA's bytes landed; empty: the eight consumer warps are
// done with it), so that no thread issues a copy but thread 0 and no block-wide barrier runs a tile.
// Include after kernels/flash_attention_sm90.cu (it uses that file's helpers). For the harness:
// run<TmaWide>(...) beside Wide.
#pragma once

#include <cuda.h>

namespace laptime::flash_sm90 {
namespace tma {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// True once the phase of parity `parity` has completed (non-blocking).
__device__ __forceinline__ bool mbar_test(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok = 0;
  while (!ok)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
}
// A box of the 3-d map (columns, rows, batch) into shared memory, completing on `bar`.
__device__ __forceinline__ void load_box(uint32_t dst, const CUtensorMap* map, int col, int row, int batch,
                                         uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(dst),
      "l"(map), "r"(col), "r"(row), "r"(batch), "r"(bar)
      : "memory");
}
#endif

constexpr int kBlockM = 128, kBlockN = 64, kBoxRows = 64;

template <int kStages>
struct Smem {
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  static constexpr int kBarBytes = 8 * (2 * kStages + 1);  // full[S], empty[S], Q's
  static constexpr int kBytes = Cfg::kSmemBytes + kBarBytes;
};

template <int kStages>
__global__ void __launch_bounds__(256, 2)
    attention_tma_kernel(__nv_bfloat16* __restrict__ out, const __grid_constant__ CUtensorMap map, int T, int H,
                         float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t q_s = (static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;
  const uint32_t ring = q_s + Cfg::kQBytes;
  const uint32_t bars = ring + kStages * Cfg::kStageBytes;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (kStages + s); };
  const uint32_t q_bar = bars + 16 * kStages;

  const int bh = blockIdx.x, b = bh / H, h = bh % H;
  const int q0 = (gridDim.y - 1 - blockIdx.y) * kBlockM;
  const int C = H * kHeadDim;
  const int tiles = min(q0 + kBlockM - 1, T - 1) / kBlockN + 1;
  const int wg = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int row_g = q0 + wg * 64 + warp * 16 + g;
  const bool producer = threadIdx.x == 0;

  if (producer) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 8);  // the block's eight warps
    }
    mbar_init(q_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Thread 0 loads: tile `tile`'s K and V into stage tile % kStages, once its previous use is done.
  int next_load = 0;
  auto load = [&](int tile) {
    const int s = tile % kStages;
    const uint32_t st = ring + s * Cfg::kStageBytes;
    mbar_expect_tx(full(s), Cfg::kStageBytes);
    load_box(st, &map, C + h * kHeadDim, tile * kBlockN, b, full(s));
    load_box(st + Cfg::kTileBytes, &map, 2 * C + h * kHeadDim, tile * kBlockN, b, full(s));
  };
  auto stage_free = [&](int tile) { return tile < kStages || mbar_test(empty(tile % kStages), (tile / kStages - 1) & 1); };
  // Loads every tile up to `must` (waiting for its stage), then as many more up to `may` as are free.
  auto refill = [&](int must, int may) {
    for (; next_load < tiles && next_load <= must; ++next_load) {
      if (next_load >= kStages) mbar_wait(empty(next_load % kStages), (next_load / kStages - 1) & 1);
      load(next_load);
    }
    for (; next_load < tiles && next_load <= may && stage_free(next_load); ++next_load) load(next_load);
  };
  if (producer) {
    mbar_expect_tx(q_bar, Cfg::kQBytes);
    for (int r = 0; r < kBlockM; r += kBoxRows) load_box(q_s + r * kRowBytes, &map, h * kHeadDim, q0 + r, b, q_bar);
    refill(-1, kStages - 1);
  }

  const uint64_t q_desc = descriptor(q_s + wg * 64 * kRowBytes);
  const uint64_t ring_desc = descriptor(ring);
  auto k_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes >> 4); };
  auto v_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes + Cfg::kTileBytes >> 4); };
  float o[kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < kHeadDim / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.f, 0.f};
  const int wg_last_row = q0 + wg * 64 + 63;
  const int my_tiles = min(tiles, wg_last_row / kBlockN + 1);
  const Rows rows{min(row_g, T - 1) - 2 * t, min(row_g + 8, T - 1) - 2 * t, q0 + wg * 64 + warp * 16};
  auto release = [&](int tile) {  // this warp is done with the tile's stage
    __syncwarp();
    if (lane == 0) mbar_arrive(empty(tile % kStages));
  };

  __syncwarp();
  mbar_wait(q_bar, 0);
  __syncwarp();
  uint32_t p[kBlockN / 16][4];
  for (int kt = 0; kt < my_tiles; ++kt) {
    if (producer) refill(kt, kt + kStages - 1);
    __syncwarp();  // warp 0 whole again before the warpgroup's .aligned wgmma
    mbar_wait(full(kt % kStages), (kt / kStages) & 1);
    __syncwarp();
    float s[Cfg::kAccS];
    issue_scores<kBlockN>(s, q_desc, k_desc(kt));
    wgmma_wait<0>();  // S of tile kt, and P·V of tile kt - 1 before it
    fence_registers(s);
    fence_registers(o);
    fence_registers(p);
    if (kt > 0) release(kt - 1);
    softmax_tile<kBlockN>(s, p, o, m, l, kt * kBlockN, rows, scale_log2);
    issue_pv<kBlockN>(o, p, v_desc(kt));
  }
  wgmma_wait<0>();
  fence_registers(o);
  fence_registers(p);
  release(my_tiles - 1);
  // The tiles past this warpgroup's rows (the other one still reads them): loaded, waited for so
  // that each release lands in its own round of the stage's barrier, released.
  for (int kt = my_tiles; kt < tiles; ++kt) {
    if (producer) refill(kt, kt);
    __syncwarp();
    mbar_wait(full(kt % kStages), (kt / kStages) & 1);
    release(kt);
  }
  if (producer) refill(tiles - 1, tiles - 1);

  store_rows<kHeadDim>(out + int64_t{b} * T * C + h * kHeadDim + 2 * t, C, l, row_g, T,
                       [&](int j, int e) { return o[4 * j + e]; });
#endif
}

// Warp-specialized: a ninth warp (threads 256-287) is the producer, its lane 0 the only thread that
// issues copies; it blocks on a stage's "empty" barrier while the eight consumer warps never wait for
// anything but a "full" one. The tensor map is prefetched once.
template <int kStages, int kMinBlocks, int kConsumerRegs>
__global__ void __launch_bounds__(384, kMinBlocks)
    attention_tma_ws_kernel(__nv_bfloat16* __restrict__ out, const __grid_constant__ CUtensorMap map, int T, int H,
                            float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t q_s = (static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;
  const uint32_t ring = q_s + Cfg::kQBytes;
  const uint32_t bars = ring + kStages * Cfg::kStageBytes;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (kStages + s); };
  const uint32_t q_bar = bars + 16 * kStages;

  const int bh = blockIdx.x, b = bh / H, h = bh % H;
  const int q0 = (gridDim.y - 1 - blockIdx.y) * kBlockM;
  const int C = H * kHeadDim;
  const int tiles = min(q0 + kBlockM - 1, T - 1) / kBlockN + 1;

  if (threadIdx.x == 256) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 8);  // the eight consumer warps
    }
    mbar_init(q_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // The warpgroup's role, uniform in the compiler's view (a shuffle from lane 0). A block whose size
  // is not a whole number of warpgroups gets its wgmma serialized (C7512), so the producer is a
  // warpgroup (warps 8-11) of which one thread loads; it gives back its registers (setmaxnreg) so
  // that two blocks of 384 threads fit an SM with 104 a consumer thread.
  const int wg_id = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
  if (wg_id == 2) {  // the producer warpgroup
    if constexpr (kConsumerRegs > 0) asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (threadIdx.x != 256) return;
    mbar_expect_tx(q_bar, Cfg::kQBytes);
    for (int r = 0; r < kBlockM; r += kBoxRows) load_box(q_s + r * kRowBytes, &map, h * kHeadDim, q0 + r, b, q_bar);
    for (int tile = 0; tile < tiles; ++tile) {
      const int s = tile % kStages;
      if (tile >= kStages) mbar_wait(empty(s), (tile / kStages - 1) & 1);
      const uint32_t st = ring + s * Cfg::kStageBytes;
      mbar_expect_tx(full(s), Cfg::kStageBytes);
      load_box(st, &map, C + h * kHeadDim, tile * kBlockN, b, full(s));
      load_box(st + Cfg::kTileBytes, &map, 2 * C + h * kHeadDim, tile * kBlockN, b, full(s));
    }
    return;
  }

  if constexpr (kConsumerRegs > 0) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegs) : "memory");
  const int wg = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int row_g = q0 + wg * 64 + warp * 16 + g;
  const uint64_t q_desc = descriptor(q_s + wg * 64 * kRowBytes);
  const uint64_t ring_desc = descriptor(ring);
  auto k_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes >> 4); };
  auto v_desc = [&](int tile) { return ring_desc + ((tile % kStages) * Cfg::kStageBytes + Cfg::kTileBytes >> 4); };
  float o[kHeadDim / 2];
#pragma unroll
  for (int i = 0; i < kHeadDim / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.f, 0.f};
  const int wg_last_row = q0 + wg * 64 + 63;
  const int my_tiles = min(tiles, wg_last_row / kBlockN + 1);
  const Rows rows{min(row_g, T - 1) - 2 * t, min(row_g + 8, T - 1) - 2 * t, q0 + wg * 64 + warp * 16};
  auto release = [&](int tile) {
    __syncwarp();
    if (lane == 0) mbar_arrive(empty(tile % kStages));
  };

  // A spin on an mbarrier leaves the warp diverged in ptxas's view; each one ends in __syncwarp so
  // that the .aligned wgmma after it is not serialized (C7512).
  mbar_wait(q_bar, 0);
  __syncwarp();
  uint32_t p[kBlockN / 16][4];
  for (int kt = 0; kt < my_tiles; ++kt) {
    mbar_wait(full(kt % kStages), (kt / kStages) & 1);
    __syncwarp();
    float s[Cfg::kAccS];
    issue_scores<kBlockN>(s, q_desc, k_desc(kt));
    wgmma_wait<0>();
    fence_registers(s);
    fence_registers(o);
    fence_registers(p);
    if (kt > 0) release(kt - 1);
    softmax_tile<kBlockN>(s, p, o, m, l, kt * kBlockN, rows, scale_log2);
    issue_pv<kBlockN>(o, p, v_desc(kt));
  }
  wgmma_wait<0>();
  fence_registers(o);
  fence_registers(p);
  release(my_tiles - 1);
  for (int kt = my_tiles; kt < tiles; ++kt) {  // the other warpgroup's tiles: each release in its round
    mbar_wait(full(kt % kStages), (kt / kStages) & 1);
    release(kt);
  }

  store_rows<kHeadDim>(out + int64_t{b} * T * C + h * kHeadDim + 2 * t, C, l, row_g, T,
                       [&](int j, int e) { return o[4 * j + e]; });
#endif
}

// The map: qkv as [B][T][3C] bf16, boxes of 64 columns (one head's 128 bytes) by 64 rows, the
// 128-byte swizzle wgmma reads; rows past T read as zeros.
inline CUtensorMap make_map(const void* qkv, int B, int T, int H) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn) throw Error("no cuTensorMapEncodeTiled");
    return reinterpret_cast<Encode>(fn);
  }();
  const uint64_t C3 = 3ull * H * kHeadDim;
  const cuuint64_t dims[3] = {C3, static_cast<cuuint64_t>(T), static_cast<cuuint64_t>(B)};
  const cuuint64_t strides[2] = {C3 * 2, C3 * 2 * T};
  const cuuint32_t box[3] = {kHeadDim, kBoxRows, 1};
  const cuuint32_t elem[3] = {1, 1, 1};
  CUtensorMap map{};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(qkv), dims, strides, box,
                            elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw Error("cuTensorMapEncodeTiled failed: " + std::to_string(int(r)));
  return map;
}

template <int kStages>
struct Variant {
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  static constexpr auto kernel = attention_tma_kernel<kStages>;
  static constexpr int kSmemBytes = Smem<kStages>::kBytes;
  static void prepare() {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  }
  static void launch(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
    if (B * T == 0) return;
    const CUtensorMap map = make_map(qkv, B, T, H);
    const dim3 grid(B * H, ceil_div(T, kBlockM));
    const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));
    kernel<<<grid, Cfg::kThreads, kSmemBytes, stream>>>(static_cast<__nv_bfloat16*>(out), map, T, H, scale_log2);
    CUDA_CHECK_LAUNCH();
  }
};

template <int kStages, int kMinBlocks, int kConsumerRegs>
struct WsVariant {
  using Cfg = Config<kBlockM, kBlockN, kStages>;
  static constexpr int kThreadsLaunched = 384;
  static constexpr auto kernel = attention_tma_ws_kernel<kStages, kMinBlocks, kConsumerRegs>;
  static constexpr int kSmemBytes = Smem<kStages>::kBytes;
  static void prepare() {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  }
  static void launch(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream) {
    if (B * T == 0) return;
    const CUtensorMap map = make_map(qkv, B, T, H);
    const dim3 grid(B * H, ceil_div(T, kBlockM));
    const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(kHeadDim));
    kernel<<<grid, 384, kSmemBytes, stream>>>(static_cast<__nv_bfloat16*>(out), map, T, H, scale_log2);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace tma
// One block an SM, no register shuffle (108 registers); two blocks an SM with the producer at 24
// and the consumers at 104 (ptxas serializes the wgmma: C7512) or 112 (not serialized; the CTA's
// pool is 1024 registers short if the pool is the CTA's own: a hang).
using TmaWs1 = tma::WsVariant<4, 1, 0>;
using TmaWs104 = tma::WsVariant<4, 2, 104>;
using TmaWs112 = tma::WsVariant<4, 2, 112>;
using TmaWide = tma::Variant<4>;
using TmaWide3 = tma::Variant<3>;
}  // namespace laptime::flash_sm90
