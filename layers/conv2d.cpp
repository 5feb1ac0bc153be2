#include "layers/conv2d.h"

#include <cmath>
#include <sstream>
#include <type_traits>
#include <vector>

#include "core/check.h"

namespace laptime {
namespace {

// cuDNN descriptors as unique_ptrs: each destroyed by its own cudnnDestroy* function.
template <class Desc, cudnnStatus_t (*Destroy)(Desc)>
struct Destroyer {
  void operator()(Desc d) const { Destroy(d); }
};
template <class Desc, cudnnStatus_t (*Destroy)(Desc)>
using Owned = std::unique_ptr<std::remove_pointer_t<Desc>, Destroyer<Desc, Destroy>>;
using TensorDesc = Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDesc = Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvDesc = Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using ActDesc = Owned<cudnnActivationDescriptor_t, cudnnDestroyActivationDescriptor>;

// An algorithm asking for more workspace than this is passed over: FFT variants can want
// gigabytes at ResNet-50's batch 256, for little gain over the implicit GEMMs.
constexpr std::size_t kMaxConvWorkspace = std::size_t{1} << 30;

TensorDesc nhwc_tensor(cudnnDataType_t type, int N, int C, int H, int W) {
  cudnnTensorDescriptor_t d = nullptr;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
  TensorDesc owned(d);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, type, N, C, H, W));
  return owned;
}

// Whether an algorithm's math type keeps the precision's promise.
bool math_allowed(Precision p, cudnnMathType_t m) {
  if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // may round fp32 to fp16
  return p != Precision::FP32 || m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH;
}

const char* api_name(ConvRoute r) {
  return r == ConvRoute::Fused ? "cudnnConvolutionBiasActivationForward" : "cudnnConvolutionForward";
}

std::string shape_text(int N, int H, int W, int C) {
  std::ostringstream os;
  os << "[" << N << ", " << H << ", " << W << ", " << C << "]";
  return os.str();
}

}  // namespace

const char* conv_route_name(ConvRoute r) {
  switch (r) {
    case ConvRoute::Auto: return "auto";
    case ConvRoute::Fused: return "fused";
    case ConvRoute::Separate: return "separate";
  }
  return "?";
}

FoldedConv fold_batchnorm(const ConvShape& s, const std::vector<float>& w_oihw, const std::vector<float>& gamma,
                          const std::vector<float>& beta, const std::vector<float>& mean,
                          const std::vector<float>& var, float eps, const std::string& bn_name) {
  const int K = s.out_channels, C = s.in_channels, R = s.kernel;
  require(static_cast<int64_t>(w_oihw.size()) == s.weight_count() && gamma.size() == static_cast<size_t>(K) &&
              beta.size() == gamma.size() && mean.size() == gamma.size() && var.size() == gamma.size(),
          "internal: BatchNorm '" + bn_name + "' does not match its convolution's shape.");
  FoldedConv f;
  f.weight.resize(w_oihw.size());
  f.bias.resize(K);
  for (int k = 0; k < K; ++k) {
    require(std::isfinite(var[k]) && var[k] >= 0.f, "BatchNorm '" + bn_name + "' has running_var[" + std::to_string(k) +
                                                        "] = " + std::to_string(var[k]) +
                                                        ", but a variance must be a non-negative number.");
    const double scale = double(gamma[k]) / std::sqrt(double(var[k]) + eps);
    f.bias[k] = static_cast<float>(beta[k] - mean[k] * scale);
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r)
        for (int q = 0; q < R; ++q)
          f.weight[((static_cast<size_t>(k) * R + r) * R + q) * C + c] =
              static_cast<float>(w_oihw[((static_cast<size_t>(k) * C + c) * R + r) * R + q] * scale);
  }
  return f;
}

// Everything one input shape needs: built in prepare(), read-only in forward().
struct Conv2d::Plan {
  cudnnHandle_t handle = nullptr;  // ctx.cudnn() of the preparing context, bound to `stream`
  cudaStream_t stream = nullptr;
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv;
  ActDesc act;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::size_t workspace = 0;
  ConvRoute route = ConvRoute::Separate;
  std::string note;      // why Separate, when Auto fell back to it
  int64_t out_rows = 0;  // N·Ho·Wo
};

Conv2d::Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
               Precision precision)
    : name_(prefix),
      shape_(shape),
      act_(act),
      precision_(precision),
      dtype_(w.dtype()),
      weight_(w.get(prefix + ".weight")),
      bias_(w.get(prefix + ".bias")) {}

Conv2d::~Conv2d() = default;
Conv2d::Conv2d(Conv2d&&) noexcept = default;

void Conv2d::prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual, ConvRoute route) {
  const int Ho = shape_.out_size(H), Wo = shape_.out_size(W);
  require(N >= 1 && Ho >= 1 && Wo >= 1, name() + ": an input of " + shape_text(N, H, W, shape_.in_channels) +
                                            " gives no output through a " + std::to_string(shape_.kernel) + "x" +
                                            std::to_string(shape_.kernel) + " convolution.");
  auto p = std::make_unique<Plan>();
  p->handle = ctx.cudnn();
  p->stream = ctx.stream();
  p->out_rows = int64_t{N} * Ho * Wo;
  const cudnnDataType_t type = dtype_ == DType::BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  p->x = nhwc_tensor(type, N, shape_.in_channels, H, W);
  p->y = nhwc_tensor(type, N, shape_.out_channels, Ho, Wo);
  p->bias = nhwc_tensor(type, 1, shape_.out_channels, 1, 1);

  cudnnFilterDescriptor_t w = nullptr;
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
  p->w.reset(w);
  // NHWC filter format = KRSC memory order, [out, kh, kw, in].
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(w, type, CUDNN_TENSOR_NHWC, shape_.out_channels, shape_.in_channels,
                                         shape_.kernel, shape_.kernel));
  cudnnConvolutionDescriptor_t conv = nullptr;
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  p->conv.reset(conv);
  // Cross-correlation, as PyTorch's Conv2d; fp32 accumulation in every precision.
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, shape_.pad, shape_.pad, shape_.stride, shape_.stride, 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionMathType(conv, precision_ == Precision::FP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  cudnnActivationDescriptor_t act = nullptr;
  CUDNN_CHECK(cudnnCreateActivationDescriptor(&act));
  p->act.reset(act);
  CUDNN_CHECK(cudnnSetActivationDescriptor(
      act, act_ == ConvActivation::Relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0.0));

  // cuDNN's heuristics, best first; kept: those that run, fit the workspace cap, and keep
  // the precision's promise.
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(p->handle, p->x.get(), w, conv, p->y.get(),
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> candidates;
  for (int i = 0; i < found; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxConvWorkspace &&
        math_allowed(precision_, perf[i].mathType))
      candidates.push_back(perf[i]);
  require(!candidates.empty(), "cuDNN has no " + std::string(precision_name(precision_)) +
                                   " algorithm for convolution '" + name() + "' on an input of " +
                                   shape_text(N, H, W, shape_.in_channels) + ".");

  // Adopts a candidate: its math type (fp32 keeps FMA, whatever the heuristic reports) and
  // its exact workspace, reserved on the context now so forward() never allocates.
  auto adopt = [&](const cudnnConvolutionFwdAlgoPerf_t& c) {
    if (precision_ != Precision::FP32) CUDNN_CHECK(cudnnSetConvolutionMathType(conv, c.mathType));
    p->algo = c.algo;
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(p->handle, p->x.get(), w, conv, p->y.get(), c.algo,
                                                        &p->workspace));
    ctx.reserve_workspace(p->workspace);
  };

  // The trial runs: each route to consider, each candidate best first, run once on these
  // (scratch) buffers at build; the first that cuDNN accepts is the plan. A refusal comes
  // back as a status at the call, before anything is enqueued — NOT_SUPPORTED, or BAD_PARAM
  // for a descriptor combination the legacy API does not take.
  std::vector<ConvRoute> routes;
  if (route != ConvRoute::Separate) routes.push_back(ConvRoute::Fused);
  if (route != ConvRoute::Fused) routes.push_back(ConvRoute::Separate);
  // cuDNN's words for the last refused trial.
  std::string refusal = act_ == ConvActivation::None
                            ? "the identity activation needs IMPLICIT_PRECOMP_GEMM, which the heuristics did not offer"
                            : "";
  for (const ConvRoute r : routes) {
    for (const auto& c : candidates) {
      // Documented: the fused call's identity activation runs only with IMPLICIT_PRECOMP_GEMM.
      if (r == ConvRoute::Fused && act_ == ConvActivation::None &&
          c.algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        continue;
      adopt(c);
      p->route = r;
      const cudnnStatus_t st = enqueue(*p, ctx.workspace(), y, x, residual, ctx.stream());
      if (st == CUDNN_STATUS_SUCCESS) {
        if (r != routes.front()) p->note = "cuDNN refused the fused call: " + refusal;
        plans_[{N, H, W}] = std::move(p);
        return;
      }
      const int category = CUDNN_STATUS_CATEGORY(st);
      if (category != CUDNN_STATUS_NOT_SUPPORTED && category != CUDNN_STATUS_BAD_PARAM)
        fail_library_call("cuDNN", api_name(r), cudnnGetErrorString(st), __func__, __FILE__, __LINE__);
      refusal = std::string(cudnnGetErrorString(st)) + " with algorithm " + std::to_string(c.algo);
    }
  }
  throw Error("cuDNN cannot run convolution '" + name() + "' (" + precision_name(precision_) + ", input " +
              shape_text(N, H, W, shape_.in_channels) + ", route " + conv_route_name(route) + "): " + refusal + ".");
}

cudnnStatus_t Conv2d::enqueue(const Plan& p, void* workspace, void* y, const void* x, const void* residual,
                              cudaStream_t stream) const {
  const float one = 1.f, zero = 0.f;
  if (p.route == ConvRoute::Fused) {
    // With no residual, alpha2 = 0 and z aliases y: cuDNN does not read z then (the layer
    // tests poison y with NaN before each run, which would show if it did).
    return cudnnConvolutionBiasActivationForward(p.handle, &one, p.x.get(), x, p.w.get(), weight_, p.conv.get(),
                                                 p.algo, workspace, p.workspace, residual ? &one : &zero, p.y.get(),
                                                 residual ? residual : y, p.bias.get(), bias_, p.act.get(), p.y.get(),
                                                 y);
  }
  const cudnnStatus_t st = cudnnConvolutionForward(p.handle, &one, p.x.get(), x, p.w.get(), weight_, p.conv.get(),
                                                   p.algo, workspace, p.workspace, &zero, p.y.get(), y);
  if (st == CUDNN_STATUS_SUCCESS)
    conv_epilogue_forward(dtype_, y, bias_, residual, p.out_rows, shape_.out_channels, act_, stream);
  return st;
}

const Conv2d::Plan& Conv2d::plan(int N, int H, int W) const {
  auto it = plans_.find({N, H, W});
  require(it != plans_.end(), "internal: convolution '" + name() + "' was not prepared for an input of " +
                                  shape_text(N, H, W, shape_.in_channels) + ".");
  return *it->second;
}

ConvRoute Conv2d::route(int N, int H, int W) const { return plan(N, H, W).route; }

std::string Conv2d::describe(int N, int H, int W) const {
  const Plan& p = plan(N, H, W);
  std::string s = std::string(conv_route_name(p.route)) + ", cuDNN algorithm " + std::to_string(p.algo) + ", " +
                  std::to_string(p.workspace) + " B workspace";
  return p.note.empty() ? s : s + " (" + p.note + ")";
}

void Conv2d::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, const void* residual) const {
  const Plan& p = plan(N, H, W);
  require(p.stream == ctx.stream(), "internal: convolution '" + name() + "' runs on a stream it was not prepared for.");
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  const cudnnStatus_t st = enqueue(p, ctx.workspace(), y, x, residual, ctx.stream());
  if (st != CUDNN_STATUS_SUCCESS)
    fail_library_call("cuDNN", api_name(p.route), cudnnGetErrorString(st), __func__, __FILE__, __LINE__);
}

}  // namespace laptime
