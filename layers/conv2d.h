// Conv2d with its BatchNorm folded in, on NHWC activations, through cuDNN.
//
//   y = act(conv(x, W') + b' (+ residual))      W' = W·γ/√(var+ε),  b' = β − mean·γ/√(var+ε)
//
// Inference BatchNorm is an affine map per output channel, so it folds into the
// convolution's weights and a bias once, on the host, at load (fold_batchnorm); the
// device never sees γ, β or the running statistics. Weights are re-laid out from
// PyTorch's OIHW to KRSC ([out, kh, kw, in]), the filter layout cuDNN pairs with NHWC.
//
// Why cuDNN's legacy cudnnConvolutionBiasActivationForward and not a cuDNN graph: it is
// one call that computes act(α1·conv(x) + α2·z + bias) — bias, the bottleneck's residual
// add (z, α2 = 1) and the ReLU in the convolution's epilogue — with no dependency beyond
// cuDNN itself (the graph API's usable C++ face, cudnn-frontend, is a separate package our
// build machines lack). fp32 and tf32 are its FLOAT_CONFIG; bf16 (bf16 storage, fp32
// compute: PSEUDO_BFLOAT16_CONFIG, which plain cudnnConvolutionForward documents) we could
// not confirm for the fused call. Two limits are thus documented or possible, and handled
// at build rather than discovered in forward(): the identity activation runs only with
// IMPLICIT_PRECOMP_GEMM, and a configuration may be refused at the call. prepare()
// therefore tries the fused call once per candidate
// algorithm; when none is accepted the layer runs ConvRoute::Separate: a plain
// cudnnConvolutionForward followed by our conv_epilogue kernel (same math, one more pass
// over y). Which route a layer took, and why, is visible through route() and describe().
// These legacy convolution entry points are marked deprecated in cuDNN 9 (still shipped and
// supported there); when they go, this layer moves to the graph API.
//
// Math types: fp32 uses CUDNN_FMA_MATH (no tensor cores, so no TF32: strict fp32); tf32 and
// bf16 use CUDNN_TENSOR_OP_MATH, which lets fp32 data round to TF32 and bf16 data use tensor
// cores, but not the ..._ALLOW_CONVERSION variant, which may round fp32 to fp16.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <cudnn.h>

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
//   Auto:     Fused where cuDNN accepts it, otherwise Separate; decided in prepare().
//   Fused:    one cudnnConvolutionBiasActivationForward; prepare() throws when cuDNN refuses it.
//   Separate: cudnnConvolutionForward, then conv_epilogue_forward.
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
  Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
         Precision precision);
  ~Conv2d();
  Conv2d(Conv2d&&) noexcept;
  Conv2d& operator=(Conv2d&&) = delete;
  Conv2d(const Conv2d&) = delete;
  Conv2d& operator=(const Conv2d&) = delete;

  // Build time, once per input shape [N, H, W, in]: descriptors, the algorithm (cuDNN's
  // heuristics, best first), its workspace reserved on `ctx`, and the route. Each candidate
  // is run once on these buffers until cuDNN accepts one, so that a refusal surfaces here and
  // never in forward(): they must be valid device memory of the forward shapes, and y is
  // overwritten. `residual` is nullptr when forward() will have none.
  void prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
               ConvRoute route = ConvRoute::Auto);
  bool prepared(int N, int H, int W) const { return plans_.count({N, H, W}) > 0; }

  // y: [N, Ho, Wo, out] = act(conv(x) + bias (+ residual)); x: [N, H, W, in]; residual: like y,
  // or nullptr. The shape must have been prepared, on a context with the same stream.
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W,
               const void* residual = nullptr) const;

  const std::string& name() const { return name_.str(); }
  const ConvShape& shape() const { return shape_; }
  ConvActivation activation() const { return act_; }
  // The route prepare() chose for this shape, and one line on it: route, cuDNN algorithm,
  // workspace, and cuDNN's refusal when Auto fell back to Separate.
  ConvRoute route(int N, int H, int W) const;
  std::string describe(int N, int H, int W) const;

 private:
  struct Plan;
  const Plan& plan(int N, int H, int W) const;
  // Enqueues the plan's route on `stream` (the handle is bound to it); cuDNN's status.
  cudnnStatus_t enqueue(const Plan& p, void* workspace, void* y, const void* x, const void* residual,
                        cudaStream_t stream) const;

  NvtxName name_;
  ConvShape shape_;
  ConvActivation act_;
  Precision precision_;
  DType dtype_;
  const void* weight_;  // [out, k, k, in]
  const void* bias_;    // [out]
  std::map<std::tuple<int, int, int>, std::unique_ptr<Plan>> plans_;  // by (N, H, W)
};

}  // namespace laptime
