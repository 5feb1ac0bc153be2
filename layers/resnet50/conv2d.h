// Conv2d with its BatchNorm folded in, on NHWC activations, through cuDNN's graph API.
//
//   y = act(conv(x, W') + b' (+ residual))      W' = W·γ/√(var+ε),  b' = β − mean·γ/√(var+ε)
//
// Inference BatchNorm is an affine map per output channel, so it folds into the
// convolution's weights and a bias once, on the host, at load (fold_batchnorm); the
// device never sees γ, β or the running statistics. Weights are re-laid out from
// PyTorch's OIHW to KRSC ([out, kh, kw, in]), the filter layout cuDNN pairs with NHWC.
//
// Why the graph API (through cudnn-frontend) and not cudnnConvolutionBiasActivationForward:
// in cuDNN 9 that legacy call is a shim over the graph API that re-does the graph, heuristic
// and plan work on every call, about 240 µs of host time each, which left ResNet-50 bound
// by its enqueue (12.8 ms of host time for a 13.0 ms lap at batch 256). Here each
// convolution's graph is built once per input shape at build (prepare), cuDNN's plan chosen
// and its workspace reserved then; forward() only hands the plan its pointers.
//
// Routes and the choice between them (layers/resnet50/conv_plan.h): one cuDNN graph with bias, residual
// and ReLU fused (ConvRoute::Fused), the convolution alone then our epilogue kernel (Separate),
// or, for a 1×1 stride-1 convolution (in NHWC the GEMM y[N·H·W, out] = x[N·H·W, in] · Wᵀ),
// cuBLASLt with all three in its epilogue (Gemm). ConvRoute::Auto times the candidates of every
// route the shape allows at prepare() and keeps the fastest; a ConvPlanCache shared by a model's
// layers makes that once per distinct shape. route() and describe() say which route and engine
// each layer got, and its time.
//
// fp8 (Precision::FP8: bf16 storage) with bf16 activations (LAPTIME_RESNET_FP8=layers, and auto
// where CUTLASS cannot run; elsewhere ResNet-50 runs e4m3 end to end, layers/resnet50/e4m3_block.h, and
// Bottleneck turns this candidate off). A 1×1 stride-1 unpadded convolution also gets an e4m3
// candidate: its input quantized to e4m3 (per-tensor static scale from the calibration pass) and
// cuBLASLt's fp8 GEMM with bias, residual (bf16, as C) and ReLU in the epilogue, bf16 out; the
// weight and both scales as Linear makes them (layers/fp8_weight.h). prepare() times it, the
// quantize pass included (the input arrives in bf16: it is the previous block's output and the
// next conv3's residual, which cuBLASLt only takes in bf16), against the plan chosen above, and
// keeps it only when it measured faster (LAPTIME_FP8_GEMM=fp8 forces it, =bf16 never); identical
// layers share that choice through the ConvPlanCache. fp8_report() says what was measured.
// Every other convolution (3×3, the stride-2 1×1 downsamples, the stem) stays bf16, because
// cuDNN's fp8 convolution graphs (conv on e4m3 x and w → · descales → + bias [→ + residual] →
// ReLU → · scale → e4m3 or bf16 y) measured slower than bf16 on every ResNet-50 shape, no engine
// of theirs reaching bf16's (docs/history/fp8.md, the first probe: laptime_fp8_shapes' table), so
// building that route would only add candidates that always lose; revisit with a cuDNN that
// lists faster fp8 engines.
//
// Precision: which engines each precision accepts is in layers/resnet50/conv_plan.h.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "core/nvtx.h"
#include "kernels/conv_epilogue.cuh"
#include "layers/resnet50/conv_plan.h"
#include "layers/device_weights.h"
#include "layers/fp8_weight.h"
#include "layers/layer_cost.h"

namespace laptime {

// What a convolution of shape `s` computes and moves (layers/layer_cost.h) on an input
// [N, H, W, in] of `dtype`: the folded weights and bias, the input pixels its windows touch
// (a 1×1 stride-2 one reads one in four), the output, and with `residual` a tensor of the
// output's shape read and added (a bottleneck's conv3).
LayerCost conv_cost(const std::string& name, const std::string& parent, const ConvShape& s, int N, int H, int W,
                    bool residual, DType dtype);

struct FoldedConv {
  std::vector<float> weight;  // [out, kh, kw, in] (KRSC)
  std::vector<float> bias;    // [out]
};

// Folds an inference BatchNorm into the convolution before it, in double, and re-lays the
// weight out OIHW → KRSC. w_oihw: [out, in, k, k]; gamma, beta, mean, var: [out].
// Throws a sentence naming `bn_name` when a variance is negative or not finite.
FoldedConv fold_batchnorm(const ConvShape& s, const std::vector<float>& w_oihw, const std::vector<float>& gamma,
                          const std::vector<float>& beta, const std::vector<float>& mean, const std::vector<float>& var,
                          float eps, const std::string& bn_name);

class Conv2d {
 public:
  // Reads `<prefix>.weight` [out, k, k, in] (KRSC, folded) and `<prefix>.bias` [out]. The
  // prefix is also the NVTX range's name (`conv1`, `layer2.1.conv2`, `layer3.0.downsample`).
  Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
         Precision precision);
  ~Conv2d();
  Conv2d(Conv2d&&) noexcept;
  Conv2d& operator=(Conv2d&&) = delete;
  Conv2d(const Conv2d&) = delete;
  Conv2d& operator=(const Conv2d&) = delete;

  // Build time, once per input shape [N, H, W, in]: the candidates of the route(s), each run
  // on these buffers (timed when there is a choice), the fastest kept and its workspace
  // reserved on `ctx`; a refusal surfaces here and never in forward(). The buffers must be
  // valid device memory of the forward shapes; y is overwritten. `residual` is nullptr when
  // forward() will have none; a residual is part of the plan, so forward() must agree.
  // `cache`: plans shared with identical convolutions prepared through the same cache
  // (nullptr: this layer's own).
  void prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
               ConvRoute route = ConvRoute::Auto, ConvPlanCache* cache = nullptr);
  bool prepared(int N, int H, int W) const { return plans_.count({N, H, W}) > 0; }

  // y: [N, Ho, Wo, out] = act(conv(x) + bias (+ residual)); x: [N, H, W, in];
  // residual: like y, or nullptr, as at prepare(). The shape must have been prepared, on a
  // context with the same stream. Any device pointers of those shapes will do, 16-byte aligned
  // (cuDNN's tensors are declared so).
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W, const void* residual = nullptr) const;

  const std::string& name() const { return name_.str(); }
  const ConvShape& shape() const { return problem_.shape; }  // the convolution as the weights file has it
  ConvActivation activation() const { return problem_.act; }
  // The folded weight [out, k, k, in] and bias [out] on the device, of dtype() (the e4m3 stream's
  // GEMMs read them: layers/resnet50/e4m3_block.h).
  const void* weight() const { return problem_.weight; }
  const void* bias() const { return problem_.bias; }
  DType dtype() const { return problem_.dtype; }
  // fp8: whether prepare() builds and times the e4m3 candidate (on by default; off on the e4m3
  // stream, whose block runs GEMMs of its own on e4m3 inputs). Before the first prepare().
  void set_fp8_candidate(bool offered) { fp8_offered_ = offered; }
  // The route prepare() chose for this shape, and one line on it: route, engine (cuDNN's plan
  // name or cuBLASLt's algorithm), workspace, measured time and candidates, and cuDNN's reason
  // when a route it was asked for was refused; in fp8, the e4m3 candidate's fp8_report().
  ConvRoute route(int N, int H, int W) const;
  std::string describe(int N, int H, int W) const;
  // conv_cost of this layer under its range's name, for the prepared shape (with the residual
  // it was prepared with). In fp8, "fp8" with 1-byte weights when the e4m3 GEMM runs (its input
  // counted as the bf16 it reads, as Linear counts a layer that quantizes: the x8 it writes and
  // reads back, 2 bytes an element more, are not), else "bf16".
  LayerCost cost(const std::string& parent, int N, int H, int W) const;

  // --- fp8 (Precision::FP8; no-ops otherwise, and for a convolution without an fp8 candidate) ---
  // True when forward() at this shape runs the e4m3 GEMM (once calibrated).
  bool runs_fp8(int N, int H, int W) const;
  // One line on the fp8 choice at this shape ("fp8, 0.081 ms with its quantize pass (bf16 0.123
  // ms)", "bf16 (fp8 0.170 ms with its quantize pass, bf16 0.123 ms)", and why fp8 was refused
  // when it was); "" where the convolution has no fp8 candidate.
  std::string fp8_report(int N, int H, int W) const;
  // Calibration, as Linear's: between begin and end, forward() runs bf16 and records amax(x) on
  // the stream; end() waits for it once and sets x's scale. Build time.
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  // {s_w, s_x} as the device holds them ({1, 1} without an fp8 candidate). Synchronizes. Tests.
  std::pair<float, float> fp8_scales(const Context& ctx) const { return fp8_.scales(ctx); }

 private:
  struct Fp8Plan;  // the e4m3 GEMM of one shape and the measured choice (conv2d.cpp)
  const ConvPlan& plan(int N, int H, int W) const;
  bool fp8_candidate() const;  // fp8 precision and a 1×1 stride-1 unpadded shape
  // Builds the e4m3 candidate for this shape and has it timed against `chosen`, on these buffers.
  void prepare_fp8(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
                   const ConvPlan& chosen, const std::string& key, ConvPlanCache* cache);

  NvtxName name_;
  ConvProblem problem_;  // shape, storage type, precision, activation, weight [out, k, k, in] and bias [out]
  std::map<std::tuple<int, int, int>, std::shared_ptr<ConvPlan>> plans_;  // by (N, H, W)
  // fp8 only.
  Fp8Weight fp8_;                                                            // W8 [out, in] and the scales
  std::map<std::tuple<int, int, int>, std::unique_ptr<Fp8Plan>> fp8_plans_;  // by (N, H, W): per layer (its scales)
  bool calibrating_ = false;
  bool fp8_offered_ = true;
};

}  // namespace laptime
