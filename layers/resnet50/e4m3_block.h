// ResNet-50's bottleneck in e4m3 end to end: fp8 precision with LAPTIME_RESNET_FP8=stream (the
// default where CUTLASS's kernels run: an sm_90 build on compute capability 9.0). Every tensor
// between two kernels is e4m3 with one per-tensor static scale, and every e4m3 tensor is written
// by the epilogue of the kernel that computes it (no quantize pass):
//
//   x8    [N, H, W, in] e4m3, real value s_x · x8: the previous block's output, or the stem's
//         (the fused stem writes e4m3 itself: models/resnet50.cpp)
//   t1  = e4m3(relu(x · W1ᵀ + b1) / s_t1)              conv1: fp8 GEMM on x8 (cuBLASLt's algorithms
//                                                     and CUTLASS's ReLU kernels, timed)
//   t2  = e4m3(relu(conv3x3(t1, W2) + b2) / s_t2)      conv2: CUTLASS's fp8 implicit-GEMM convolution
//                                                     (TMA im2col; layers/cutlass/cutlass_conv.h)
//   sc8 = e4m3((x · Wdᵀ + bd) / s_sc)                  downsample (block 0 of a stage): x8 subsampled
//                                                     first when its stride is 2, then an fp8 GEMM
//   y8  = e4m3(relu(t2 · W3ᵀ + b3 + s_r · r8) / s_y)   conv3: CUTLASS's fp8 GEMM whose epilogue reads
//                                                     the e4m3 residual r8 (sc8, or x8, scale s_r)
// Weights e4m3 with one scale each (layers/fp8_weight.h: s_w = amax / 448); fp32 accumulation in
// the tensor cores (fast accumulation: CUTLASS's sm90 convolutions have no promotion, and the
// stream's GEMMs follow LAPTIME_FP8_FAST_ACCUM's default).
//
// Why. ResNet-50 is memory-bound in its 1×1 convolutions and compute-bound in its 3×3 ones
// (docs/history/fp8.md, ResNet-50's bytes and floors): e4m3 halves the bytes of the first and
// doubles the tensor cores' rate for the second. The per-layer fp8 design
// (LAPTIME_RESNET_FP8=layers) could do neither: cuDNN 9.19's fp8 convolutions are slower than its
// bf16 ones on every ResNet-50 shape, and cuBLASLt takes no e4m3 residual, so its activations
// stayed bf16.
//
// The scales come from one bf16 pass (ResNet50::calibrate): the block runs its Conv2d's bf16 plans
// then and records amax of conv1's, conv2's, the downsample's and conv3's bf16 outputs (s = 2 ·
// amax / 448, as every fp8 input of laptime's); x's scale is the producer's. bench/torch_fp8.py's
// to_fp8_stream_resnet50 is PyTorch's same recipe, the accuracy reference.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/resnet50/conv2d.h"
#include "layers/resnet50/conv_plan.h"
#include "layers/cutlass/cutlass_conv.h"
#include "layers/cutlass/cutlass_gemm.h"
#include "layers/fp8_weight.h"
#include "layers/gemm.h"
#include "layers/layer_cost.h"

namespace laptime {

// "" when the e4m3 stream can run on ctx's GPU with this build (CUTLASS's residual-stream GEMMs and
// convolutions built and offered: sm_90a code on compute capability 9.0, LAPTIME_CUTLASS not
// off); else why not.
std::string e4m3_stream_refusal(const Context& ctx);

// What prepare() throws when a library has no plan for one of the stream's GEMMs at a shape
// (ResNet50 then keeps the bf16 stream where LAPTIME_RESNET_FP8=auto, and says why).
class E4m3StreamError : public Error {
 public:
  using Error::Error;
};

class E4m3Block {
 public:
  // The block's own convolutions (their folded bf16 weights and biases), which outlive it. Makes
  // the e4m3 weights and the scales (synchronizes).
  E4m3Block(const Context& ctx, const std::string& block, const Conv2d& conv1, const Conv2d& conv2, const Conv2d& conv3,
            const Conv2d* downsample);
  ~E4m3Block();
  E4m3Block(const E4m3Block&) = delete;
  E4m3Block& operator=(const E4m3Block&) = delete;

  // The scratch forward() needs beyond the bf16 design's (whose t1, t2 and shortcut slots it
  // reuses, sc8 in the shortcut's): a stride-2 downsample's subsampled x8. Bytes, for [N, H, W, in].
  std::size_t extra_scratch_bytes(int N, int H, int W) const;
  struct Slots {
    void* t1;   // [N, H, W, width] e4m3
    void* t2;   // [N, Ho, Wo, width] e4m3
    void* sc8;  // [N, Ho, Wo, 4·width] e4m3 (downsample)
    void* xs8;  // [N, Ho, Wo, in] e4m3 (stride-2 downsample)
  };
  // Build time, once per input shape: every kernel timed among those that can run it (the choices
  // shared through `cache` by identical blocks), on these buffers.
  // x_scale: s_x on the device, the producer's (read at every run, so it may change at calibration).
  void prepare(Context& ctx, int N, int H, int W, void* y8, const void* x8, const float* x_scale, const Slots& s,
               ConvPlanCache* cache);
  // y8 = the block of x8 (see the top); the shape prepared, on the same stream.
  void forward(const Context& ctx, void* y8, const void* x8, const float* x_scale, int N, int H, int W,
               const Slots& s) const;

  // Calibration: between begin and end the block runs its bf16 plans (Bottleneck::forward) and
  // hands these its bf16 t1, t2, shortcut and output; end waits once and sets the scales.
  void begin_calibration(const Context& ctx);
  void record_t1(const Context& ctx, const void* t1, int64_t n) const { t1_scale_.record(ctx, t1, DType::BF16, n); }
  void record_t2(const Context& ctx, const void* t2, int64_t n) const { t2_scale_.record(ctx, t2, DType::BF16, n); }
  void record_shortcut(const Context& ctx, const void* sc, int64_t n) const {
    sc_scale_.record(ctx, sc, DType::BF16, n);
  }
  void record_output(const Context& ctx, const void* y, int64_t n) const { y_scale_.record(ctx, y, DType::BF16, n); }
  void end_calibration(const Context& ctx);
  bool calibrating() const { return calibrating_; }
  const Fp8Scale& output_scale() const { return y_scale_; }     // s_y: the next block's s_x
  const Fp8Scale& shortcut_scale() const { return sc_scale_; }  // s_sc (made with a downsample only)
  const Fp8Scale& t1_scale() const { return t1_scale_; }
  const Fp8Scale& t2_scale() const { return t2_scale_; }

  // One line per convolution (conv1, conv2, conv3[, downsample]) on what runs at this shape.
  std::vector<std::string> describe(int N, int H, int W) const;
  // What each convolution moves on the stream (every tensor 1 byte, the biases bf16), under `parent`.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W) const;

 private:
  struct Plan;  // one input shape's kernels (e4m3_block.cpp)
  const Plan& plan(int N, int H, int W) const;
  CutlassConvArgs conv2_args(int N, int H, int W, const Slots& s) const;
  void choose_conv2(Context& ctx, Plan& p, const CutlassConvArgs& a2, ConvPlanCache* cache) const;
  void choose_conv3(Context& ctx, Plan& p, const CutlassGemmArgs& a, ConvPlanCache* cache) const;
  CutlassGemmArgs conv3_args(int N, int Ho, int Wo, void* y8, const Slots& s, const void* r8,
                             const float* r_scale) const;

  std::string block_;
  const Conv2d &conv1_, &conv2_, &conv3_;
  const Conv2d* downsample_;
  NvtxName name1_, name3_, name_ds_;
  NvtxName name2_;
  Fp8Weight w1_, w2_, w3_, wds_;  // e4m3 weights (their input scales unused: each input's is its producer's)
  Fp8Scale t1_scale_, t2_scale_, sc_scale_, y_scale_;  // conv1's, conv2's, the downsample's and the block's outputs
  std::map<std::tuple<int, int, int>, std::unique_ptr<Plan>> plans_;  // by (N, H, W)
  bool calibrating_ = false;
};

}  // namespace laptime
