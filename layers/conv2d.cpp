#include "layers/conv2d.h"

#include <cstdlib>

#include <cmath>
#include <exception>
#include <sstream>
#include <vector>

// The only file that includes cudnn-frontend: its headers are heavy. Built without its JSON
// (de)serialization (CUDNN_FRONTEND_SKIP_JSON_LIB, layers/resnet50.cmake), which we never use.
#include <cudnn_frontend.h>

#include "core/check.h"

namespace laptime {
namespace fe = cudnn_frontend;

namespace {

// The graph's tensors by uid, numbered in the order enqueue() lists their pointers: the
// frontend's raw-pointer execute takes the user tensors' pointers sorted by uid. Every graph
// has x, w and y; the fused one adds bias and, with a residual, z.
enum Uid : int64_t { kUidX = 1, kUidW, kUidBias, kUidResidual, kUidY };

std::vector<int64_t> graph_uids(ConvRoute route, bool residual) {
  if (route == ConvRoute::Separate) return {kUidX, kUidW, kUidY};
  if (residual) return {kUidX, kUidW, kUidBias, kUidResidual, kUidY};
  return {kUidX, kUidW, kUidBias, kUidY};
}

// An engine asking for more workspace than this is passed over: FFT variants can want
// gigabytes at ResNet-50's batch 256, for little gain over the implicit GEMMs.
constexpr int64_t kMaxConvWorkspace = int64_t{1} << 30;

// The graph API names a 4-d tensor's dimensions [N, C, H, W] whatever its layout; NHWC is
// told by the strides.
std::vector<int64_t> nhwc_strides(int64_t C, int64_t H, int64_t W) { return {H * W * C, 1, W * C, C}; }

// One convolution graph to build.
struct GraphSpec {
  ConvShape shape;      // kernel, stride, pad, out_channels (in_channels: see C)
  int64_t C;            // input channels as stored, >= shape.in_channels
  int64_t N, H, W;      // the input's batch and sides
  DType dtype;          // storage type of x, w, bias, residual and y
  Precision precision;  // which engines may run it
  ConvActivation act;
  bool residual;        // the fused graph adds z
  ConvRoute route;      // Fused: conv → bias → [z] → [ReLU]; Separate: conv alone
};

// Describes the graph of `s` on `g`: explicit dims and NHWC strides for every tensor the
// caller passes, fp32 for the virtual ones between the nodes.
void describe_graph(fe::graph::Graph& g, const GraphSpec& s) {
  const fe::DataType_t io = s.dtype == DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT;
  g.set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t K = s.shape.out_channels, R = s.shape.kernel;
  const int64_t Ho = s.shape.out_size(static_cast<int>(s.H)), Wo = s.shape.out_size(static_cast<int>(s.W));
  using Tensor = fe::graph::Tensor_attributes;
  auto x = g.tensor(Tensor().set_name("x").set_uid(kUidX).set_dim({s.N, s.C, s.H, s.W}).set_stride(
      nhwc_strides(s.C, s.H, s.W)));
  auto w = g.tensor(Tensor().set_name("w").set_uid(kUidW).set_dim({K, s.C, R, R}).set_stride(nhwc_strides(s.C, R, R)));
  // Cross-correlation, as PyTorch's Conv2d.
  auto y = g.conv_fprop(x, w,
                        fe::graph::Conv_fprop_attributes()
                            .set_name("conv_fprop")
                            .set_padding({s.shape.pad, s.shape.pad})
                            .set_stride({s.shape.stride, s.shape.stride})
                            .set_dilation({1, 1}));
  if (s.route == ConvRoute::Fused) {
    using Pointwise = fe::graph::Pointwise_attributes;
    auto bias = g.tensor(Tensor().set_name("bias").set_uid(kUidBias).set_dim({1, K, 1, 1}).set_stride({K, 1, K, K}));
    y = g.pointwise(y, bias, Pointwise().set_name("add_bias").set_mode(fe::PointwiseMode_t::ADD));
    if (s.residual) {
      auto z = g.tensor(Tensor().set_name("z").set_uid(kUidResidual).set_dim({s.N, K, Ho, Wo}).set_stride(
          nhwc_strides(K, Ho, Wo)));
      y = g.pointwise(y, z, Pointwise().set_name("add_residual").set_mode(fe::PointwiseMode_t::ADD));
    }
    if (s.act == ConvActivation::Relu) y = g.pointwise(y, Pointwise().set_name("relu").set_mode(fe::PointwiseMode_t::RELU_FWD));
  }
  y->set_output(true).set_name("y").set_uid(kUidY).set_data_type(io).set_dim({s.N, K, Ho, Wo}).set_stride(
      nhwc_strides(K, Ho, Wo));
}

// The frontend's steps from a described graph to a built execution plan. False, with the
// frontend's words in *why, when cuDNN has no engine for it that the precision allows.
// LAPTIME_CUDNN_DESELECT_ENGINES="eng4,eng39": cuDNN engines to leave out of every plan, for
// bisecting a wrong or slow engine without rebuilding. Read once.
const std::vector<std::string>& deselected_engines() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    const char* env = std::getenv("LAPTIME_CUDNN_DESELECT_ENGINES");
    std::string item;
    for (const char* c = env ? env : ""; ; ++c) {
      if (*c == ',' || *c == '\0') {
        if (!item.empty()) v.push_back(item);
        item.clear();
        if (*c == '\0') break;
      } else {
        item += *c;
      }
    }
    return v;
  }();
  return names;
}

bool build_plan(fe::graph::Graph& g, cudnnHandle_t handle, const GraphSpec& s, std::string* why) {
  try {
    fe::error_t e = g.validate();
    if (e.is_good()) e = g.build_operation_graph(handle);
    // Heuristics mode A, best first. The convolution alone may also take cuDNN's fallback
    // engines, the last resort before giving up; the fused graph does not, since Separate
    // on a heuristic engine beats a fused fallback one.
    if (e.is_good())
      e = s.route == ConvRoute::Fused ? g.create_execution_plans({fe::HeurMode_t::A})
                                      : g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
    if (e.is_good()) {
      // The filters act on the configs just listed, so they come between listing and check_support().
      // Strict fp32: an engine noted TENSOR_CORE computes fp32 data in TF32, so none of those.
      // Every precision: no engine that down-converts its inputs (fp32 to fp16, say).
      // fp32 and tf32 (fp32 storage): no reduced-precision reduction and no Winograd either: both
      // trade accuracy the fp32 storage types are chosen for.
      std::vector<fe::NumericalNote_t> barred{fe::NumericalNote_t::DOWN_CONVERT_INPUTS};
      if (s.precision != Precision::BF16)
        barred.insert(barred.end(), {fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION, fe::NumericalNote_t::WINOGRAD,
                                     fe::NumericalNote_t::WINOGRAD_TILE_4x4, fe::NumericalNote_t::WINOGRAD_TILE_6x6,
                                     fe::NumericalNote_t::WINOGRAD_TILE_13x13});
      if (s.precision == Precision::FP32) barred.push_back(fe::NumericalNote_t::TENSOR_CORE);
      g.deselect_numeric_notes(barred).deselect_workspace_greater_than(kMaxConvWorkspace);
      // tf32: not engine 4. With it, tf32 ResNet-50 at B=32 was 5.7e-2 off PyTorch fp32 on an H200
      // (cuDNN 9.19) while B=3 was 5.8e-4; bisected by LAPTIME_CUDNN_DESELECT_ENGINES, leaving out
      // engine 4 alone brought B=3, 32 and 64 to 5.7e-4. Leaving out engine 51 instead also
      // passed, so the fault needs both (shared workspace is the suspect); see docs/PERF.md.
      std::vector<std::string> engines = deselected_engines();
      if (s.precision == Precision::TF32) engines.push_back("eng4");
      if (!engines.empty()) g.deselect_engines(engines);
      e = g.check_support();  // the first config, best first, that cuDNN supports becomes the candidate
    }
    if (e.is_good()) e = g.build_plans();
    if (e.is_bad()) *why = e.get_message();
    return e.is_good();
  } catch (const std::exception& ex) {  // the frontend's lower layers may throw instead
    *why = ex.what();
    return false;
  }
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

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
  std::unique_ptr<fe::graph::Graph> graph;  // its execution plan built
  ConvRoute route = ConvRoute::Separate;
  bool residual = false;  // prepared with a residual (forward must agree)
  int64_t workspace = 0;  // bytes, reserved on the context
  std::string engine;     // cuDNN's name for the plan: engine and knobs
  std::string note;       // why Separate, when Auto fell back to it
  int64_t out_rows = 0;   // N·Ho·Wo, the epilogue's rows

  // Enqueues the route on `stream` (the handle is bound to it): the graph, then for Separate
  // the epilogue kernel. forward() and prepare()'s trial run share it.
  //
  // Host cost per call: the pointers go in a stack array in uid order, and the frontend's
  // raw-pointer execute copies the variant-pack template it prepared in build_plans(),
  // patches them in, and wraps cudnnBackendExecute in one cuDNN variant-pack descriptor
  // (created, finalized, destroyed: a small allocation inside cuDNN, a few µs — to be read
  // off the bench's host-time line, against ~240 µs for the legacy fused call). No map, no
  // allocation of ours. Keeping a finalized descriptor per pointer tuple would save that
  // descriptor, but needs the plan's backend handle, which the frontend keeps private.
  fe::error_t enqueue(const Conv2d& c, void* workspace, void* y, const void* x, const void* residual) const {
    void* ptrs[5];
    int n = 0;
    ptrs[n++] = const_cast<void*>(x);
    ptrs[n++] = const_cast<void*>(c.weight_);
    if (route == ConvRoute::Fused) {
      ptrs[n++] = const_cast<void*>(c.bias_);
      if (residual) ptrs[n++] = const_cast<void*>(residual);
    }
    ptrs[n++] = y;
    fe::error_t e = graph->execute(handle, ptrs, n, workspace);
    if (e.is_good() && route == ConvRoute::Separate)
      conv_epilogue_forward(c.dtype_, y, c.bias_, residual, out_rows, c.shape_.out_channels, c.act_, stream);
    return e;
  }
};

Conv2d::Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
               Precision precision, int stored_in_channels)
    : name_(prefix),
      shape_(shape),
      act_(act),
      precision_(precision),
      dtype_(w.dtype()),
      stored_in_(stored_in_channels > 0 ? stored_in_channels : shape.in_channels),
      weight_(w.get(prefix + ".weight")),
      bias_(w.get(prefix + ".bias")) {
  require(stored_in_ >= shape_.in_channels, "internal: convolution '" + prefix + "' cannot store its " +
                                                std::to_string(shape_.in_channels) + " input channels in " +
                                                std::to_string(stored_in_) + ".");
  if (stored_in_ > shape_.in_channels) {
    // [out·k·k rows of in] → [out·k·k rows of stored_in], the extra channels zero.
    const std::size_t es = dtype_size(dtype_), rows = std::size_t(shape_.out_channels) * shape_.kernel * shape_.kernel;
    padded_weight_ = DeviceBuffer(rows * stored_in_ * es);
    CUDA_CHECK(cudaMemset(padded_weight_.data(), 0, padded_weight_.bytes()));
    CUDA_CHECK(cudaMemcpy2D(padded_weight_.data(), stored_in_ * es, weight_, shape_.in_channels * es,
                            shape_.in_channels * es, rows, cudaMemcpyDeviceToDevice));
    // Both ran on the legacy default stream, which a context's non-blocking stream does not
    // wait for: finish them here, at build.
    CUDA_CHECK(cudaDeviceSynchronize());
    weight_ = padded_weight_.data();
  }
}

Conv2d::~Conv2d() = default;
Conv2d::Conv2d(Conv2d&&) noexcept = default;

std::unique_ptr<Conv2d::Plan> Conv2d::build(Context& ctx, ConvRoute route, int N, int H, int W, void* y,
                                            const void* x, const void* residual, std::string* why) const {
  auto p = std::make_unique<Plan>();
  p->handle = ctx.cudnn();
  p->stream = ctx.stream();
  p->route = route;
  p->residual = residual != nullptr;
  p->out_rows = int64_t{N} * shape_.out_size(H) * shape_.out_size(W);
  p->graph = std::make_unique<fe::graph::Graph>();
  const GraphSpec spec{shape_, stored_in_, N, H, W, dtype_, precision_, act_, p->residual, route};
  describe_graph(*p->graph, spec);
  if (!build_plan(*p->graph, p->handle, spec, why)) return nullptr;
  // enqueue() lists its pointers in this order; a frontend that disagreed would bind them wrongly.
  require(p->graph->get_variant_pack_uids_sorted() == graph_uids(route, p->residual),
          "internal: cudnn-frontend lists the tensors of convolution '" + name() + "' in an unexpected order.");
  (void)p->graph->get_plan_name(p->engine);
  // The plan's exact workspace, reserved on the context now so that forward() never allocates.
  fe::error_t e = p->graph->get_workspace_size(p->workspace);
  if (e.is_bad()) {
    *why = e.get_message();
    return nullptr;
  }
  ctx.reserve_workspace(static_cast<std::size_t>(p->workspace));
  // The trial run: whatever cuDNN would still refuse at execution, and the first launch's
  // module loading, happen here rather than in the timed loop.
  e = p->enqueue(*this, ctx.workspace(), y, x, residual);
  if (e.is_bad()) {
    *why = e.get_message();
    return nullptr;
  }
  return p;
}

void Conv2d::prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual, ConvRoute route) {
  const int Ho = shape_.out_size(H), Wo = shape_.out_size(W);
  require(N >= 1 && Ho >= 1 && Wo >= 1, name() + ": an input of " + shape_text(N, H, W, stored_in_) +
                                            " gives no output through a " + std::to_string(shape_.kernel) + "x" +
                                            std::to_string(shape_.kernel) + " convolution.");
  auto cannot = [&](ConvRoute r, const std::string& why) {
    return Error("cuDNN cannot run convolution '" + name() + "' (" + precision_name(precision_) + ", input " +
                 shape_text(N, H, W, stored_in_) + ", route " + conv_route_name(r) + "): " + why);
  };
  std::string refusal;  // the frontend's words on the fused graph
  if (route != ConvRoute::Separate) {
    if (auto p = build(ctx, ConvRoute::Fused, N, H, W, y, x, residual, &refusal)) {
      plans_[{N, H, W}] = std::move(p);
      return;
    }
    if (route == ConvRoute::Fused) throw cannot(route, refusal);
  }
  std::string why;
  auto p = build(ctx, ConvRoute::Separate, N, H, W, y, x, residual, &why);
  if (!p) throw cannot(route, why);
  if (route == ConvRoute::Auto) p->note = "cuDNN refused the fused graph: " + first_line(refusal);
  plans_[{N, H, W}] = std::move(p);
}

// forward() checks with `if`, not require(): require's message would be built on every call.
const Conv2d::Plan& Conv2d::plan(int N, int H, int W) const {
  auto it = plans_.find({N, H, W});
  if (it == plans_.end())
    throw Error("internal: convolution '" + name() + "' was not prepared for an input of " +
                shape_text(N, H, W, stored_in_) + ".");
  return *it->second;
}

ConvRoute Conv2d::route(int N, int H, int W) const { return plan(N, H, W).route; }

std::string Conv2d::describe(int N, int H, int W) const {
  const Plan& p = plan(N, H, W);
  std::string s = std::string(conv_route_name(p.route)) + ", cuDNN plan " + p.engine + ", " +
                  std::to_string(p.workspace) + " B workspace";
  return p.note.empty() ? s : s + " (" + p.note + ")";
}

void Conv2d::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, const void* residual) const {
  const Plan& p = plan(N, H, W);
  if (p.stream != ctx.stream())
    throw Error("internal: convolution '" + name() + "' runs on a stream it was not prepared for.");
  if (p.residual != (residual != nullptr))
    throw Error("internal: convolution '" + name() + "' was prepared " + (p.residual ? "with" : "without") +
                " a residual.");
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  fe::error_t e = p.enqueue(*this, ctx.workspace(), y, x, residual);
  if (e.is_bad())
    fail_library_call("cuDNN", "cudnn_frontend::graph::Graph::execute", e.get_message().c_str(), __func__, __FILE__,
                      __LINE__);
}

}  // namespace laptime
