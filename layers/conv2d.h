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
// The graph is conv_fprop → add bias → [add residual] → [ReLU], fp32 in between and fp32
// accumulation, the storage type at both ends. Where cuDNN has no engine for that fusion
// (ConvRoute::Separate) the graph is the convolution alone and our conv_epilogue kernel
// adds bias and residual and applies the ReLU (same math, one more pass over y). Auto
// decides at build; route() and describe() say which route a layer took, on which cuDNN
// engine, and why.
//
// Precision: fp32 is strict, no TF32 — engines that cuDNN notes as using tensor cores are
// excluded (on fp32 data a tensor core means TF32); tf32 allows them; bf16 uses them. No
// precision accepts an engine that down-converts its inputs (fp32 to fp16, say).
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
#include "layers/device_weights.h"

namespace laptime {

// A square-kernel 2-D convolution's geometry (dilation 1, one group: all ResNet-50 uses).
struct ConvShape {
  int in_channels = 0;
  int out_channels = 0;
  int kernel = 1;  // kh = kw
  int stride = 1;
  int pad = 0;
  int out_size(int in) const { return (in + 2 * pad - kernel) / stride + 1; }
  int64_t weight_count() const { return int64_t{out_channels} * kernel * kernel * in_channels; }
};

// The epilogue's route (see the top of this file).
//   Auto:     Fused where cuDNN has an engine for the fused graph, otherwise Separate; decided in prepare().
//   Fused:    one graph, conv → bias → [residual] → [ReLU]; prepare() throws when cuDNN cannot run it.
//   Separate: a graph of the convolution alone, then conv_epilogue_forward.
enum class ConvRoute { Auto, Fused, Separate };
const char* conv_route_name(ConvRoute r);

struct FoldedConv {
  std::vector<float> weight;  // [out, kh, kw, in] (KRSC)
  std::vector<float> bias;    // [out]
};

// Folds an inference BatchNorm into the convolution before it, in double, and re-lays the
// weight out OIHW → KRSC. w_oihw: [out, in, k, k]; gamma, beta, mean, var: [out].
// Throws a sentence naming `bn_name` when a variance is negative or not finite.
FoldedConv fold_batchnorm(const ConvShape& s, const std::vector<float>& w_oihw, const std::vector<float>& gamma,
                          const std::vector<float>& beta, const std::vector<float>& mean,
                          const std::vector<float>& var, float eps, const std::string& bn_name);

class Conv2d {
 public:
  // Reads `<prefix>.weight` [out, k, k, in] (KRSC, folded) and `<prefix>.bias` [out]. The
  // prefix is also the NVTX range's name (`conv1`, `layer2.1.conv2`, `layer3.0.downsample`).
  //
  // stored_in_channels: the input's channels per pixel as the caller stores them, when it
  // pads them past shape.in_channels with zeros (0: no padding). The layer then convolves
  // over all of them, with its own copy of the weight zero-padded to match, made here once.
  // For the ResNet stem: with 3 channels (6 or 12 bytes a pixel) cuDNN has no Hopper kernel
  // and pads the input itself on every call; models/resnet50.cpp stores the image padded.
  Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
         Precision precision, int stored_in_channels = 0);
  ~Conv2d();
  Conv2d(Conv2d&&) noexcept;
  Conv2d& operator=(Conv2d&&) = delete;
  Conv2d(const Conv2d&) = delete;
  Conv2d& operator=(const Conv2d&) = delete;

  // Build time, once per input shape [N, H, W, stored_in_channels]: the graph of the route,
  // cuDNN's plan for it (its heuristics, best first, less what the precision forbids), and
  // its workspace reserved on `ctx`. The plan is then run once on these buffers, so that a
  // refusal surfaces here and never in forward(): they must be valid device memory of the
  // forward shapes, and y is overwritten. `residual` is nullptr when forward() will have
  // none; a residual is part of the fused graph, so forward() must agree with prepare().
  void prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
               ConvRoute route = ConvRoute::Auto);
  bool prepared(int N, int H, int W) const { return plans_.count({N, H, W}) > 0; }

  // y: [N, Ho, Wo, out] = act(conv(x) + bias (+ residual)); x: [N, H, W, stored_in_channels];
  // residual: like y, or nullptr, as at prepare(). The shape must have been prepared, on a
  // context with the same stream. Any device pointers of those shapes will do, 16-byte aligned
  // (cuDNN's tensors are declared so).
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W,
               const void* residual = nullptr) const;

  const std::string& name() const { return name_.str(); }
  const ConvShape& shape() const { return shape_; }  // the convolution as the weights file has it
  int stored_in_channels() const { return stored_in_; }
  ConvActivation activation() const { return act_; }
  // The route prepare() chose for this shape, and one line on it: route, cuDNN engine,
  // workspace, and cuDNN's reason when Auto fell back to Separate.
  ConvRoute route(int N, int H, int W) const;
  std::string describe(int N, int H, int W) const;

 private:
  struct Plan;  // holds cudnn-frontend's graph: only conv2d.cpp includes the frontend's headers
  const Plan& plan(int N, int H, int W) const;
  // One route's plan for this shape, built and trial-run on these buffers; nullptr, with
  // cuDNN's reason in *why, when cuDNN has no engine for it.
  std::unique_ptr<Plan> build(Context& ctx, ConvRoute route, int N, int H, int W, void* y, const void* x,
                              const void* residual, std::string* why) const;

  NvtxName name_;
  ConvShape shape_;
  ConvActivation act_;
  Precision precision_;
  DType dtype_;
  int stored_in_;                // channels per input pixel, >= shape_.in_channels
  DeviceBuffer padded_weight_;   // [out, k, k, stored_in_], only when stored_in_ > in_channels
  const void* weight_;           // [out, k, k, stored_in_]
  const void* bias_;             // [out]
  std::map<std::tuple<int, int, int>, std::unique_ptr<Plan>> plans_;  // by (N, H, W)
};

}  // namespace laptime
