// ResNet-50's bottleneck on the e4m3 residual stream: fp8 precision with LAPTIME_RESNET_FP8=stream
// (the default where CUTLASS's residual-stream kernels run: an sm_90 build on compute capability
// 9.0). Each block's input and output stay e4m3 in memory, one per-tensor static scale each:
//
//   x8    [N, H, W, in] e4m3, real value s_x · x8: the previous block's output, or the stem's
//         output quantized once (models/resnet50.cpp)
//   t1  = relu(x · W1ᵀ + b1)            conv1: cuBLASLt's fp8 GEMM on x8 itself (A_SCALE s_x, W1 in
//                                       e4m3 with its own s_w1), bias and ReLU in the epilogue, bf16
//   t2  = relu(conv2(t1))               conv2: the Conv2d's own bf16 plan (cuDNN's 3×3, fused)
//   sc8 = e4m3((x · Wdᵀ + bd) / s_sc)   downsample (block 0 of a stage): x8 subsampled first when
//                                       its stride is 2 (kernels/fp8.cuh), then cuBLASLt's fp8 GEMM
//                                       writing e4m3 with its own scale
//   y8  = e4m3(relu(t2 · W3ᵀ + b3 + s_r · r8) / s_y)
//                                       conv3: CUTLASS's bf16 GEMM whose epilogue reads the e4m3
//                                       residual r8 (sc8, or x8 itself, scale s_r) and writes e4m3
//                                       (layers/cutlass/cutlass_gemm.h: the residual-stream kernels)
//
// Why this split. ResNet-50's bytes are in the wide tensors, each block's input and output (4x the
// width conv2 works at): in the bf16 design conv1 reads the input in bf16, conv3 reads it again as
// the residual and writes the output in bf16. Here all three are 1 byte an element, with no
// quantize pass of their own: each e4m3 tensor is written by an epilogue. conv2 and conv3's A stay
// bf16 (the narrow tensors): cuDNN's fp8 convolutions are slower than its bf16 ones on every
// ResNet-50 shape (docs/PERF.md), and a bf16 t2 keeps conv3 a bf16 GEMM, which the e4m3 C and D
// leave memory-bound on the wide side alone.
//
// The scales come from one bf16 pass (ResNet50::calibrate): the block runs its Conv2d's bf16 plans
// then, recording amax of the downsample's and conv3's bf16 outputs (s = 2 · amax / 448, as every
// fp8 input of laptime's: layers/fp8_weight.h); x's scale is the producer's. bench/torch_fp8.py's
// to_fp8_stream_resnet50 is PyTorch's same recipe, the accuracy reference.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/conv2d.h"
#include "layers/conv_plan.h"
#include "layers/cutlass/cutlass_gemm.h"
#include "layers/fp8_weight.h"
#include "layers/gemm.h"
#include "layers/layer_cost.h"

namespace laptime {

// "" when the e4m3 stream can run on ctx's GPU with this build (CUTLASS's residual-stream kernels
// built and offered: sm_90a code on compute capability 9.0, LAPTIME_CUTLASS not off); else why not.
std::string e4m3_stream_refusal(const Context& ctx);

// What prepare() throws when a library has no plan for one of the stream's GEMMs at a shape
// (ResNet50 then keeps the bf16 stream where LAPTIME_RESNET_FP8=auto, and says why).
class E4m3StreamError : public Error {
 public:
  using Error::Error;
};

class E4m3Block {
 public:
  // The block's own convolutions (their folded bf16 weights and biases; conv2's plans), which
  // outlive it. Makes the e4m3 weights of conv1 and the downsample and the scales (synchronizes).
  E4m3Block(const Context& ctx, const std::string& block, const Conv2d& conv1, const Conv2d& conv2,
            const Conv2d& conv3, const Conv2d* downsample);
  ~E4m3Block();
  E4m3Block(const E4m3Block&) = delete;
  E4m3Block& operator=(const E4m3Block&) = delete;

  // The scratch forward() needs beyond the bf16 design's (whose t1, t2 and shortcut slots it
  // reuses, sc8 in the shortcut's): a stride-2 downsample's subsampled x8. Bytes, for [N, H, W, in].
  std::size_t extra_scratch_bytes(int N, int H, int W) const;
  struct Slots {
    void* t1;   // [N, H, W, width] bf16
    void* t2;   // [N, Ho, Wo, width] bf16
    void* sc8;  // [N, Ho, Wo, 4·width] e4m3 (downsample)
    void* xs8;  // [N, Ho, Wo, in] e4m3 (stride-2 downsample)
  };
  // Build time, once per input shape: the GEMM plans, conv3's CUTLASS kernel timed among those
  // that can run it (the choice shared through `cache` by identical blocks), on these buffers.
  // x_scale: s_x on the device, the producer's (read at every run, so it may change at calibration).
  void prepare(Context& ctx, int N, int H, int W, void* y8, const void* x8, const float* x_scale, const Slots& s,
               ConvPlanCache* cache);
  // y8 = the block of x8 (see the top); the shape prepared, on the same stream.
  void forward(const Context& ctx, void* y8, const void* x8, const float* x_scale, int N, int H, int W,
               const Slots& s) const;

  // Calibration: between begin and end the block runs its bf16 plans (Bottleneck::forward) and
  // hands these its bf16 shortcut and output; end waits once and sets the scales.
  void begin_calibration(const Context& ctx);
  void record_shortcut(const Context& ctx, const void* sc, int64_t n) const { sc_scale_.record(ctx, sc, DType::BF16, n); }
  void record_output(const Context& ctx, const void* y, int64_t n) const { y_scale_.record(ctx, y, DType::BF16, n); }
  void end_calibration(const Context& ctx);
  bool calibrating() const { return calibrating_; }
  const Fp8Scale& output_scale() const { return y_scale_; }  // s_y: the next block's s_x
  const Fp8Scale& shortcut_scale() const { return sc_scale_; }  // s_sc (made with a downsample only)

  // One line per convolution (conv1, conv2, conv3[, downsample]) on what runs at this shape.
  std::vector<std::string> describe(int N, int H, int W) const;
  // What each convolution moves on the stream (1-byte x, residual and y), under `parent`.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W) const;

 private:
  struct Plan;  // one input shape's GEMMs and conv3's kernel (e4m3_block.cpp)
  const Plan& plan(int N, int H, int W) const;

  std::string block_;
  const Conv2d &conv1_, &conv2_, &conv3_;
  const Conv2d* downsample_;
  NvtxName name1_, name3_, name_ds_;
  Fp8Weight w1_, wds_;          // e4m3 weights (their input scales unused: x's is the producer's)
  Fp8Scale sc_scale_, y_scale_;  // the downsample's output, the block's output
  std::map<std::tuple<int, int, int>, std::unique_ptr<Plan>> plans_;  // by (N, H, W)
  bool calibrating_ = false;
};

}  // namespace laptime
