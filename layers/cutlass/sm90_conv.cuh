// One CUTLASS 3.x Hopper implicit-GEMM convolution (layers/cutlass/cutlass_conv.h says what it
// computes), as a class template that each convolution row of layers/cutlass/cutlass.cmake's table
// instantiates once, in a translation unit of its own.
//
//   mainloop  CUTLASS's conv collective builder: TMA im2col loads of the NHWC activation (the
//             GEMM's A, K = R·R·C), TMA tiled loads of the KRSC filter (B), wgmma on one consumer
//             warpgroup fed by a producer warp; stages fill what shared memory holds after the
//             epilogue (not persistent: CUTLASS 4.2's sm90 convolutions take no tile scheduler).
//   epilogue  the GEMMs' visitor tree (ScaledLinCombPerColBiasEltAct: s_a · s_b, the per-channel
//             bias, ReLU, · d_scale, the saturating e4m3 conversion), TMA-stored.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/kernel_hardware_info.hpp>  // before the conv builders, which use it undeclared
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/device/conv_universal_adapter.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/numeric_types.h>

#include "core/check.h"
#include "layers/cutlass/cutlass_conv.h"

namespace laptime::sm90 {

// A CUTLASS kernel with another __launch_bounds__ minimum (cutlass::device_kernel reads
// MinBlocksPerMultiprocessor from the kernel class); at namespace scope, where the launch stub
// nvcc writes for it can name it.
template <class Base, int MinBlocks>
struct WithMinBlocks : Base {
  static constexpr uint32_t MinBlocksPerMultiprocessor = MinBlocks;
};

// Stages: the mainloop's shared-memory ring (0: all that the epilogue leaves, one block an SM).
// The kernel is not persistent and its one consumer warpgroup runs mainloop and epilogue in turn,
// so a block alone on its SM leaves the tensor cores idle through every prologue and epilogue; a
// short ring and MinBlocks (the kernel's __launch_bounds__ minimum: ptxas caps the registers so
// that many 256-thread blocks fit, 128 a thread at two; at three, 80, the 128x64 tile spills 608
// bytes) let blocks share an SM and fill each other's gaps.
template <int TileM, int TileN, int TileK, int Stages = 0, int MinBlocks = 1>
class Sm90ConvE4m3 final : public CutlassConvKernel {
  using e4m3 = cutlass::float_e4m3_t;
  using bf16 = cutlass::bfloat16_t;
  static constexpr int kAlign = 16;  // e4m3 elements in 16 bytes
  using Tile = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using Cluster = cute::Shape<cute::_1, cute::_1, cute::_1>;
  using Fusion = cutlass::epilogue::fusion::ScaledLinCombPerColBiasEltAct<cutlass::epilogue::thread::ReLu, e4m3, float,
                                                                          bf16, void, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::TensorNHWC, kAlign, e4m3,
      cutlass::layout::TensorNHWC, kAlign, cutlass::epilogue::TmaWarpSpecialized, Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop, e4m3,
      cutlass::layout::TensorNHWC, kAlign, e4m3, cutlass::layout::TensorNHWC, kAlign, float, Tile, Cluster,
      std::conditional_t<
          Stages == 0,
          cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
          cutlass::conv::collective::StageCount<(Stages ? Stages : 2)>>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;
  using ProblemShape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, Mainloop::NumSpatialDimensions>;
  using BaseKernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, Mainloop, Epilogue>;
  using Kernel = std::conditional_t<MinBlocks == 1, BaseKernel, WithMinBlocks<BaseKernel, MinBlocks>>;
  using Device = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;

  struct Prepared {
    CutlassConvArgs args;
    void* workspace = nullptr;
    Device op;
  };

 public:
  std::string name() const override {
    std::ostringstream os;
    os << "fp8 implicit-GEMM conv " << TileM << 'x' << TileN << 'x' << TileK;
    if (Stages) os << " " << Stages << " stages";
    if (MinBlocks > 1) os << " " << MinBlocks << " blocks an SM";
    os << ", ReLU+bias -> e4m3";
    return os.str();
  }

  std::string refusal(const CutlassConvArgs& a) const override {
    if (a.N <= 0 || a.H <= 0 || a.W <= 0 || a.C <= 0 || a.K <= 0 || a.R <= 0) return "an empty convolution";
    if (a.C % kAlign) return "C = " + std::to_string(a.C) + " is not a multiple of 16";
    if (a.K % kAlign) return "K = " + std::to_string(a.K) + " is not a multiple of 16";
    auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    for (const void* p : {a.x, a.w, static_cast<const void*>(a.y), a.bias})
      if (p && misaligned(p)) return "an operand is not 16-byte aligned";
    if (Device::can_implement(arguments(a)) != cutlass::Status::kSuccess) return "CUTLASS's can_implement refuses it";
    return "";
  }

  std::size_t workspace_bytes(const CutlassConvArgs& a) const override {
    return Device::get_workspace_size(arguments(a));
  }

  void run(const CutlassConvArgs& a, CutlassLaunchCache& cache, void* workspace, std::size_t workspace_bytes,
           cudaStream_t stream) const override {
    auto* p = static_cast<Prepared*>(cache.prepared.get());
    if (!p || cache.owner != this || !same(p->args, a) || p->workspace != workspace) {
      const std::string why = refusal(a);
      if (!why.empty()) throw Error("CUTLASS convolution " + name() + " cannot run this shape: " + why + ".");
      const Arguments args = arguments(a);
      if (Device::get_workspace_size(args) > workspace_bytes)
        throw Error("internal: CUTLASS convolution " + name() + " needs more workspace than the context holds.");
      auto fresh = std::make_shared<Prepared>();
      fresh->args = a;
      fresh->workspace = workspace;
      check(fresh->op.initialize(args, workspace, stream), "initialize");
      cache.prepared = fresh;
      cache.owner = this;
      p = fresh.get();
    }
    // Launched plainly: CUTLASS's sm_90 implicit-GEMM kernel has no grid-dependency wait, so a
    // programmatic dependent launch (sm90_gemm.cuh's) could read its input before it is written.
    check(p->op.run(stream), "run");
    CUDA_CHECK(cudaGetLastError());
  }

 private:
  static bool same(const CutlassConvArgs& x, const CutlassConvArgs& y) {
    return x.N == y.N && x.H == y.H && x.W == y.W && x.C == y.C && x.K == y.K && x.R == y.R && x.stride == y.stride &&
           x.pad == y.pad && x.x == y.x && x.w == y.w && x.y == y.y && x.bias == y.bias && x.a_scale == y.a_scale &&
           x.b_scale == y.b_scale && x.d_scale == y.d_scale;
  }

  void check(cutlass::Status st, const char* what) const {
    if (st != cutlass::Status::kSuccess)
      throw Error("CUTLASS convolution " + name() + ": " + what + " failed (" + cutlassGetStatusString(st) + ").");
  }

  static Arguments arguments(const CutlassConvArgs& a) {
    ProblemShape shape(cutlass::conv::Mode::kCrossCorrelation, {a.N, a.H, a.W, a.C}, {a.K, a.R, a.R, a.C},
                       {a.pad, a.pad}, {a.pad, a.pad}, {a.stride, a.stride}, {1, 1}, 1);
    Arguments args{};
    args.problem_shape = shape;
    args.mainloop.ptr_A = static_cast<const e4m3*>(a.x);
    args.mainloop.ptr_B = static_cast<const e4m3*>(a.w);
    args.epilogue.ptr_C = nullptr;
    args.epilogue.ptr_D = static_cast<e4m3*>(a.y);
    // C's and D's strides from the problem's output tensor, innermost mode first (CUTLASS's own
    // library sets them so: tools/library/src/conv_operation_3x.hpp).
    using StrideD = typename Kernel::StrideD;
    StrideD dD{};
    cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{},
                   [&](auto i) { cute::get<0, i>(dD) = shape.stride_C[ProblemShape::RankT - 2 - i]; });
    args.epilogue.dD = dD;
    args.epilogue.dC = dD;
    auto& f = args.epilogue.thread;
    f.alpha = 1.f;
    f.beta = 0.f;
    f.scale_a_ptr = a.a_scale;
    f.scale_b_ptr = a.b_scale;
    f.scale_d_ptr = a.d_scale;
    f.bias_ptr = static_cast<const bf16*>(a.bias);
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    args.hw_info.device_id = device;
    args.hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    return args;
  }
};

}  // namespace laptime::sm90
