// One CUTLASS 3.x Hopper GEMM (layers/cutlass/cutlass_gemm.h says what it computes), as a
// class template that each row of layers/cutlass/cutlass.cmake's table instantiates once: a
// translation unit per kernel keeps the build parallel and a change to one from rebuilding the others.
//
// The kernel, from CUTLASS's collective builders:
//   mainloop  TMA loads of A (K-major) and B (K-major: nn.Linear's [out, in]) into a shared-
//             memory ring, wgmma on warpgroups that a producer warp feeds (warp-specialized);
//             cooperative (two warpgroups on one 128-row tile) or ping-pong (two warpgroups on
//             two tiles, one's epilogue hidden under the other's mainloop); the stages are what
//             shared memory holds after the epilogue's carve-out. fp8 operands: the collective
//             that promotes partial sums to fp32 every 4 k-blocks (mma_promotion_interval),
//             which holds a second fp32 accumulator: a warpgroup's share of the tile must stay
//             at 64x128 (64 + 64 registers a thread) or it spills (128x128 cooperative and
//             64x128 ping-pong fit; cutlass.cmake makes a spill a build error). The fast-
//             accumulation collectives (no promotion) hold one: 128x128 a warpgroup fits.
//   epilogue  TMA-stored, its visitor tree CUTLASS's ScaledLinCombPerColBiasEltAct: scales,
//             the per-column bias, beta · C (· c_scale for an e4m3 C, TMA-loaded beside the
//             store), the activation and, for an e4m3 D, · d_scale and the saturating
//             conversion, all on the accumulators in registers: no extra pass.
//   schedule  the persistent tile scheduler (one CTA per SM walks the tiles), its raster order
//             and swizzle chosen at run time (CutlassSchedule).
// Compiled only in sm_90a translation units (layers/cutlass/cutlass.cmake); CUTLASS's own guard
// (CUTLASS_ARCH_MMA_SM90A_ENABLED) leaves the device code empty elsewhere.
#pragma once

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/numeric_types.h>

#include "core/check.h"
#include "core/env_switches.h"
#include "layers/cutlass/cutlass_gemm.h"

namespace laptime::sm90 {

using bf16 = cutlass::bfloat16_t;
using e4m3 = cutlass::float_e4m3_t;

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, e4m3> ? DType::F8E4M3 : DType::BF16;
}

// The two mainloop/epilogue schedule pairs CUTLASS's builders take for sm90.
struct Cooperative {
  static constexpr int kEpiM = 128;  // the rows of an epilogue subtile CUTLASS allows
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  static constexpr const char* kName = "cooperative";
  static constexpr bool kFastAccum = false;
};
struct Pingpong {
  static constexpr int kEpiM = 64;  // the rows of an epilogue subtile CUTLASS allows
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  static constexpr const char* kName = "ping-pong";
  static constexpr bool kFastAccum = false;
};
// fp8 with the tensor cores' own accumulation (no promotion): one accumulator, so a 128x128
// ping-pong tile (one warpgroup each) and the 128x256 cooperative one fit in registers.
struct CooperativeFastAccum {
  static constexpr int kEpiM = 128;  // the rows of an epilogue subtile CUTLASS allows
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  static constexpr const char* kName = "cooperative";
  static constexpr bool kFastAccum = true;
};
struct PingpongFastAccum {
  static constexpr int kEpiM = 64;  // the rows of an epilogue subtile CUTLASS allows
  using Kernel = cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  static constexpr const char* kName = "ping-pong";
  static constexpr bool kFastAccum = true;
};

template <CutlassEpilogue E>
struct Activation {  // Bias
  template <class T>
  using Fn = cutlass::epilogue::thread::Identity<T>;
};
template <>
struct Activation<CutlassEpilogue::GeluBias> {
  template <class T>
  using Fn = cutlass::epilogue::thread::GELU_taylor<T>;  // 0.5·z·(1 + tanh(√(2/π)(z + 0.044715 z³)))
};
template <>
struct Activation<CutlassEpilogue::ReluBias> {
  template <class T>
  using Fn = cutlass::epilogue::thread::ReLu<T>;
};

// The C operand's alignment in elements (16 bytes); a kernel without C keeps bf16's, unused.
template <class T>
constexpr int c_alignment() {
  if constexpr (std::is_void_v<T>)
    return 8;
  else
    return 16 / static_cast<int>(sizeof(T));
}

// AB: operand type; D: output type; Epi: the activation; TileM/N/K: the CTA tile; ClusterM/N:
// the thread-block cluster (TMA multicast of B along M, of A along N); Schedule: above; C_: the
// residual's type (GPT-2's: bf16 beside a bf16 D, none beside an e4m3 one; ResNet-50's residual
// stream: e4m3 beside an e4m3 D, scaled by c_scale); EpiN: the columns of the epilogue's subtile
// (0: CUTLASS's choice, 32 columns cooperative, 64 ping-pong for an 8-bit D). The subtile sets
// how much of C the producer can have in flight: CUTLASS keeps min(subtiles a tile, 4) C stages,
// so its 128x32 e4m3 subtile allows 16 KB a SM, where 128x64 (four stages) and 128x128 (two)
// allow 32 KB; 128x128, with half the subtiles' barriers, won conv3 on the e4m3 stream.
template <class AB, class D, CutlassEpilogue Epi, int TileM, int TileN, int TileK, int ClusterM, int ClusterN,
          class Schedule, class C_ = std::conditional_t<std::is_same_v<D, e4m3>, void, bf16>, int EpiN = 0>
class Sm90Gemm final : public CutlassGemmKernel {
  static constexpr bool kOut8 = std::is_same_v<D, e4m3>;
  using C = C_;
  static constexpr bool kHasC = !std::is_void_v<C>, kC8 = std::is_same_v<C, e4m3>;
  static constexpr int kAlignAB = 16 / sizeof(AB), kAlignD = 16 / sizeof(D), kAlignC = c_alignment<C>();
  using Tile = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using Cluster = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;
  using Fusion =
      cutlass::epilogue::fusion::ScaledLinCombPerColBiasEltAct<Activation<Epi>::template Fn, D, float, bf16, C, float>;
  using EpilogueTile = std::conditional_t<EpiN == 0, cutlass::epilogue::collective::EpilogueTileAuto,
                                          cute::Shape<cute::Int<Schedule::kEpiM>, cute::Int<(EpiN ? EpiN : 16)>>>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, EpilogueTile, float, float, C,
      cutlass::layout::RowMajor, kAlignC, D, cutlass::layout::RowMajor, kAlignD, typename Schedule::Epilogue,
      Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, AB, cutlass::layout::RowMajor, kAlignAB, AB,
      cutlass::layout::ColumnMajor, kAlignAB, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      typename Schedule::Kernel>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;

  // What a call site keeps between calls (CutlassLaunchCache): the adapter holds the encoded
  // parameters; a call with the same arguments only launches.
  struct Prepared {
    CutlassGemmArgs args;
    CutlassSchedule schedule;
    void* workspace = nullptr;
    Device op;
  };

 public:
  std::string name() const override {
    std::ostringstream os;
    os << (std::is_same_v<AB, e4m3> ? "fp8" : "bf16") << ' ' << TileM << 'x' << TileN << 'x' << TileK << " cluster "
       << ClusterM << 'x' << ClusterN << ' ' << Schedule::kName << ", "
       << (Epi == CutlassEpilogue::GeluBias   ? "GELU+bias"
           : Epi == CutlassEpilogue::ReluBias ? "ReLU+bias"
                                              : "bias")
       << (kC8 ? " + e4m3 residual" : "") << " -> " << (kOut8 ? "e4m3" : "bf16")
       << (Schedule::kFastAccum ? ", fast accumulation" : "");
    if (EpiN) os << ", epilogue " << Schedule::kEpiM << 'x' << EpiN;
    return os.str();
  }
  DType ab_dtype() const override { return dtype_of<AB>(); }
  DType d_dtype() const override { return dtype_of<D>(); }
  bool has_c() const override { return kHasC; }
  DType c_dtype() const override { return kC8 ? DType::F8E4M3 : DType::BF16; }
  CutlassEpilogue epilogue() const override { return Epi; }
  bool fast_accum() const override { return Schedule::kFastAccum; }

  std::string refusal(const CutlassGemmArgs& a) const override {
    const int64_t ldd = a.ldd ? a.ldd : a.N;
    auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (a.M <= 0 || a.N <= 0 || a.K <= 0) return "an empty product";
    if (a.K % kAlignAB) return "K = " + std::to_string(a.K) + " is not a multiple of " + std::to_string(kAlignAB);
    if (ldd % kAlignD || ldd < a.N) return "the output's row stride " + std::to_string(ldd) + " is not 16-byte aligned";
    if (a.N % 8) return "N = " + std::to_string(a.N) + " is not a multiple of 8 (the bias is read 16 bytes at a time)";
    if (!kHasC && a.beta != 0.f) return "this kernel takes no C (no residual into its e4m3 output)";
    for (const void* p : {a.a, a.b, static_cast<const void*>(a.d), a.c, a.bias})
      if (p && misaligned(p)) return "an operand is not 16-byte aligned";
    const Arguments args = arguments(a, CutlassSchedule{});
    if (Device::can_implement(args) != cutlass::Status::kSuccess) return "CUTLASS's can_implement refuses the shape";
    return "";
  }

  std::size_t workspace_bytes(const CutlassGemmArgs& a, const CutlassSchedule& s) const override {
    return Device::get_workspace_size(arguments(a, s));
  }

  void run(const CutlassGemmArgs& a, const CutlassSchedule& s, CutlassLaunchCache& cache, void* workspace,
           std::size_t workspace_bytes, cudaStream_t stream) const override {
    auto* p = static_cast<Prepared*>(cache.prepared.get());
    if (!p || cache.owner != this || !same(p->args, a) || p->schedule.raster != s.raster ||
        p->schedule.swizzle != s.swizzle || p->workspace != workspace) {
      // New operands: checked (alignment, a residual into e4m3) and encoded once, not at every call.
      const std::string why = refusal(a);
      if (!why.empty())
        throw Error("CUTLASS GEMM " + name() + " cannot run M=" + std::to_string(a.M) + " N=" + std::to_string(a.N) +
                    " K=" + std::to_string(a.K) + ": " + why + ".");
      const Arguments args = arguments(a, s);
      if (Device::get_workspace_size(args) > workspace_bytes)
        throw Error("internal: CUTLASS GEMM " + name() + " needs more workspace than the context holds.");
      auto fresh = std::make_shared<Prepared>();
      fresh->args = a;
      fresh->schedule = s;
      fresh->workspace = workspace;
      check(fresh->op.initialize(args, workspace, stream), "initialize");
      cache.prepared = fresh;
      cache.owner = this;
      p = fresh.get();
    }
    // A programmatic dependent launch (LAPTIME_CUTLASS_PDL): the grid may start while the work
    // before it on the stream finishes; built with CUTLASS_ENABLE_GDC_FOR_SM90 (cutlass.cmake),
    // its producer and epilogue wait (griddepcontrol.wait) before their first global access.
    check(p->op.run(stream, nullptr, env::cutlass_pdl()), "run");
    CUDA_CHECK(cudaGetLastError());
  }

 private:
  static bool same(const CutlassGemmArgs& x, const CutlassGemmArgs& y) {
    return x.M == y.M && x.N == y.N && x.K == y.K && x.alpha == y.alpha && x.a == y.a && x.b == y.b && x.d == y.d &&
           x.ldd == y.ldd && x.c == y.c && x.beta == y.beta && x.bias == y.bias && x.a_scale == y.a_scale &&
           x.b_scale == y.b_scale && x.d_scale == y.d_scale && x.c_scale == y.c_scale;
  }

  void check(cutlass::Status st, const char* what) const {
    if (st != cutlass::Status::kSuccess)
      throw Error("CUTLASS GEMM " + name() + ": " + what + " failed (" + cutlassGetStatusString(st) + ").");
  }

  static Arguments arguments(const CutlassGemmArgs& a, const CutlassSchedule& s) {
    const int64_t ldd = a.ldd ? a.ldd : a.N;
    Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {a.M, a.N, a.K, 1};
    // Strides as (rows, columns, batch); the unit stride is static in CUTLASS's types.
    cute::get<0>(args.mainloop.dA) = a.K;
    cute::get<2>(args.mainloop.dA) = int64_t{a.M} * a.K;
    cute::get<0>(args.mainloop.dB) = a.K;
    cute::get<2>(args.mainloop.dB) = int64_t{a.N} * a.K;
    args.mainloop.ptr_A = static_cast<const AB*>(a.a);
    args.mainloop.ptr_B = static_cast<const AB*>(a.b);
    cute::get<0>(args.epilogue.dD) = ldd;
    cute::get<2>(args.epilogue.dD) = ldd * a.M;
    args.epilogue.dC = args.epilogue.dD;
    args.epilogue.ptr_D = static_cast<D*>(a.d);
    using ElementCStorage = std::remove_const_t<std::remove_pointer_t<decltype(args.epilogue.ptr_C)>>;
    args.epilogue.ptr_C = static_cast<const ElementCStorage*>(kHasC ? (a.c ? a.c : a.d) : nullptr);
    auto& f = args.epilogue.thread;
    f.alpha = a.alpha;
    f.beta = a.beta;
    f.scale_a_ptr = a.a_scale;
    f.scale_b_ptr = a.b_scale;
    f.scale_d_ptr = kOut8 ? a.d_scale : nullptr;
    f.scale_c_ptr = kC8 ? a.c_scale : nullptr;
    f.bias_ptr = static_cast<const bf16*>(a.bias);
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    args.hw_info.device_id = device;
    args.hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    using Raster = decltype(args.scheduler.raster_order);
    args.scheduler.raster_order = s.raster == CutlassRaster::AlongM   ? Raster::AlongM
                                  : s.raster == CutlassRaster::AlongN ? Raster::AlongN
                                                                      : Raster::Heuristic;
    args.scheduler.max_swizzle_size = s.swizzle;
    return args;
  }
};

}  // namespace laptime::sm90
