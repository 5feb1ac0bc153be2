#include "layers/conv2d.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <exception>
#include <sstream>
#include <vector>

// The only file that includes cudnn-frontend: its headers are heavy. Built without its JSON
// (de)serialization (CUDNN_FRONTEND_SKIP_JSON_LIB, layers/resnet50.cmake), which we never use.
#include <cudnn_frontend.h>

#include "core/check.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"
#include "layers/gemm.h"
#include "layers/gemm_tuner.h"

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

// LAPTIME_CONV_TUNE=off: no timing, cuDNN's first supported plan (see conv2d.h). Read once.
bool tuning_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("LAPTIME_CONV_TUNE");
    return !(env && std::string(env) == "off");
  }();
  return on;
}

// Candidates timed per cuDNN route and per shape, at most: the heuristics' lists run to dozens of
// configurations, most of them variants of the first few; building each plan costs host time
// (runtime-compiled engines the most), so the list is cut after this many distinct ones that build.
constexpr int kMaxCudnnCandidates = 8;
// cuBLASLt algorithms timed for a 1×1 convolution, best first by its heuristic.
constexpr int kMaxGemmCandidates = 4;
// Host time one cuDNN route may spend building and timing its candidates for one shape, once it
// has one: engines compiled at run time (NVRTC) can take a second each to build.
constexpr double kRouteBudgetSeconds = 1.0;

// The frontend's steps from a described graph to its list of engine configurations, filtered by
// what the precision allows. False, with the frontend's words in *why, when none is left.
bool list_configs(fe::graph::Graph& g, cudnnHandle_t handle, const GraphSpec& s, bool tune, std::string* why) {
  try {
    fe::error_t e = g.validate();
    if (e.is_good()) e = g.build_operation_graph(handle);
    // Tuning: heuristics A and B and the fallback list, all of them candidates. Without it, as
    // before: mode A, best first; the convolution alone may also take the fallback engines, the
    // fused graph does not, since Separate on a heuristic engine beats a fused fallback one.
    if (e.is_good()) {
      if (tune)
        e = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::B, fe::HeurMode_t::FALLBACK});
      else
        e = s.route == ConvRoute::Fused ? g.create_execution_plans({fe::HeurMode_t::A})
                                        : g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
    }
    if (e.is_good()) {
      // The filters act on the configs just listed, so they come right after listing.
      // Strict fp32: an engine noted TENSOR_CORE computes fp32 data in TF32, so none of those.
      // Every precision: no engine that down-converts its inputs (fp32 to fp16, say).
      // fp32 and tf32 (fp32 storage): no reduced-precision reduction and no Winograd either: both
      // trade accuracy the fp32 storage types are chosen for.
      std::vector<fe::NumericalNote_t> barred{fe::NumericalNote_t::DOWN_CONVERT_INPUTS};
      if (s.dtype != DType::BF16)  // fp32 storage: fp32 and tf32 (bf16 and fp8 store bf16)
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
      if (g.get_execution_plan_count() == 0)
        e = fe::error_t{fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED, "no engine configuration listed"};
    }
    if (e.is_bad()) *why = e.get_message();
    return e.is_good();
  } catch (const std::exception& ex) {  // the frontend's lower layers may throw instead
    *why = ex.what();
    return false;
  }
}

// Builds configuration i of g's list unless a configuration of the same name was seen before
// (the lists repeat engines). True with its name and workspace when it built and its workspace
// is one we accept; false otherwise, with the frontend's words in *error when it failed.
bool build_config(fe::graph::Graph& g, int64_t i, std::vector<std::string>* seen, std::string* name, int64_t* ws,
                  std::string* error) {
  if (g.get_plan_name_at_index(i, *name).is_bad()) return false;
  if (std::find(seen->begin(), seen->end(), *name) != seen->end()) return false;
  seen->push_back(*name);
  fe::error_t e;
  *ws = 0;
  try {
    e = g.build_plan_at_index(i);
    if (e.is_good()) e = g.get_workspace_size_plan_at_index(i, *ws);
  } catch (const std::exception& ex) {
    e = fe::error_t{fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED, ex.what()};
  }
  if (e.is_good() && *ws <= kMaxConvWorkspace) return true;
  *error = e.is_bad() ? e.get_message() : "workspace of " + std::to_string(*ws) + " B";
  return false;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string shape_text(int N, int H, int W, int C) {
  std::ostringstream os;
  os << "[" << N << ", " << H << ", " << W << ", " << C << "]";
  return os.str();
}

}  // namespace

LayerCost conv_cost(const std::string& name, const std::string& parent, const ConvShape& s, int N, int H, int W,
                    bool residual, DType dtype) {
  const double es = static_cast<double>(dtype_size(dtype));
  const int Ho = s.out_size(H), Wo = s.out_size(W);
  // The input pixels the windows touch: all of them unless the kernel is narrower than the
  // stride (a 1×1 stride-2 downsample reads one pixel in four, whole 16-byte channel runs).
  const int th = std::min(H, Ho * s.kernel), tw = std::min(W, Wo * s.kernel);
  const double out_px = double(N) * Ho * Wo, in_px = double(N) * th * tw;
  LayerCost c{name, parent, "conv"};
  c.flops = 2 * out_px * s.out_channels * double(s.in_channels) * s.kernel * s.kernel;
  c.weight_bytes = (double(s.weight_count()) + s.out_channels) * es;  // folded weights and bias
  c.input_bytes = (in_px * s.in_channels + (residual ? out_px * s.out_channels : 0)) * es;
  c.output_bytes = out_px * s.out_channels * es;
  return c;
}

const char* conv_route_name(ConvRoute r) {
  switch (r) {
    case ConvRoute::Auto: return "auto";
    case ConvRoute::Fused: return "fused";
    case ConvRoute::Separate: return "separate";
    case ConvRoute::Gemm: return "gemm";
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

// Everything one input shape needs: built in prepare(), read-only in forward(). Shared, through
// a ConvPlanCache, by the identical convolutions of a model: nothing in it names a layer's weights.
struct Conv2d::Plan {
  cudnnHandle_t handle = nullptr;  // ctx.cudnn() of the preparing context, bound to `stream`
  cudaStream_t stream = nullptr;
  ConvRoute route = ConvRoute::Separate;
  std::unique_ptr<fe::graph::Graph> graph;  // Fused, Separate: its candidate plans built
  int64_t plan_index = 0;                   // the graph's chosen plan
  std::unique_ptr<Gemm> gemm;               // Gemm: the chosen algorithm
  bool residual = false;  // prepared with a residual (forward must agree)
  int64_t workspace = 0;  // bytes, reserved on the context
  std::string engine;     // cuDNN's name for the plan (engine and knobs), or cuBLASLt's algorithm
  std::string note;       // what was refused on the way, if anything
  int64_t out_rows = 0;   // N·Ho·Wo, the epilogue's rows
  float ms = -1.f;        // measured at prepare (negative: not timed)
  int candidates = 0;     // how many were timed for this shape, all routes

  // Enqueues the route on ctx's stream: the graph (then for Separate the epilogue kernel), or
  // the GEMM. forward() and prepare()'s trial runs share it.
  //
  // Host cost per cuDNN call: the pointers go in a stack array in uid order, and the frontend's
  // raw-pointer execute copies the variant-pack template it prepared at build, patches them in,
  // and wraps cudnnBackendExecute in one cuDNN variant-pack descriptor (a few µs). No map, no
  // allocation of ours.
  fe::error_t enqueue(const Conv2d& c, const Context& ctx, void* y, const void* x, const void* residual) const {
    if (route == ConvRoute::Gemm) {
      // y[rows, out] = ReLU(x[rows, in] · W[out, in]ᵀ + bias + 1·residual)
      gemm->run(ctx, y, x, c.weight_, c.bias_, 1.f, residual ? 1.f : 0.f, residual);
      return {fe::error_code_t::OK, ""};
    }
    void* ptrs[5];
    int n = 0;
    ptrs[n++] = const_cast<void*>(x);
    ptrs[n++] = const_cast<void*>(c.weight_);
    if (route == ConvRoute::Fused) {
      ptrs[n++] = const_cast<void*>(c.bias_);
      if (residual) ptrs[n++] = const_cast<void*>(residual);
    }
    ptrs[n++] = y;
    fe::error_t e = graph->execute_plan_at_index(handle, ptrs, n, ctx.workspace(), plan_index);
    if (e.is_good() && route == ConvRoute::Separate)
      conv_epilogue_forward(c.dtype_, y, c.bias_, residual, out_rows, c.shape_.out_channels, c.act_, stream);
    return e;
  }
};

// fp8: one shape's e4m3 GEMM, owned by its layer (the descriptor holds the layer's scale
// pointers), and the choice, which identical layers share through the cache.
struct Conv2d::Fp8Plan {
  std::unique_ptr<Gemm> gemm;  // nullptr when cuBLASLt had no plan
  GemmTuner::Fp8Choice choice;  // fp8_ms: quantize + GEMM; bf16_ms: the chosen bf16/cuDNN plan
  DeviceBuffer x8;              // [N·H·W, in] e4m3, when chosen
  int64_t x_elems = 0;          // N·H·W·in
};

struct ConvPlanCache::Entries {
  std::map<std::string, std::shared_ptr<Conv2d::Plan>> plans;
  std::map<std::string, GemmTuner::Fp8Choice> fp8;  // by the plan's key
};
ConvPlanCache::ConvPlanCache() : entries_(std::make_unique<Entries>()) {}
ConvPlanCache::~ConvPlanCache() = default;

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

// choose()'s search for one input shape: the candidates it builds and measures on the
// forward's own buffers, the fastest so far, and the routes that had nothing. Nested in Conv2d
// for its access to Plan and to the layer's weights.
struct Conv2d::Chooser {
  Chooser(const Conv2d& conv, Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual)
      : conv(conv), ctx(ctx), N(N), H(H), W(W), y(y), x(x), residual(residual), tune(tuning_enabled()),
        rows(int64_t{N} * conv.shape_.out_size(H) * conv.shape_.out_size(W)) {}

  const Conv2d& conv;
  Context& ctx;
  int N, H, W;
  void* y;
  const void* x;
  const void* residual;
  bool tune;             // time the candidates (LAPTIME_CONV_TUNE is not off)
  int64_t rows;          // N·Ho·Wo
  std::shared_ptr<Plan> best;
  std::string refusals;  // the routes that had nothing, and why
  int candidates = 0;    // timed, all routes

  std::shared_ptr<Plan> fresh(ConvRoute r) const {
    auto p = std::make_shared<Plan>();
    p->handle = ctx.cudnn();
    p->stream = ctx.stream();
    p->route = r;
    p->residual = residual != nullptr;
    p->out_rows = rows;
    return p;
  }
  void refused(ConvRoute r, const std::string& why) {
    refusals += std::string(refusals.empty() ? "" : "; ") + conv_route_name(r) + ": " + first_line(why);
  }
  // Milliseconds of one run of p on the forward's buffers, timed as every candidate is
  // (core/timing.h); untimed, 0 when it runs. Negative when it does not, cuDNN's words in *error.
  float measure(const Plan& p, std::string* error) const {
    auto run = [&] {
      fe::error_t e = p.enqueue(conv, ctx, y, x, residual);
      if (e.is_bad()) *error = e.get_message();
      return e.is_good();
    };
    if (!tune) return run() ? 0.f : -1.f;
    return time_candidate(ctx.stream(), run);
  }
  // Keeps p when it is the first plan that runs or, timed, the fastest.
  void consider(std::shared_ptr<Plan> p) {
    if (!best || (tune && p->ms < best->ms)) best = std::move(p);
  }
  void cudnn_route(ConvRoute r);
  void gemm_route();
};

// A cuDNN route: every listed configuration, deduplicated by name, built until the cap (and
// the host-time budget once one works), each measured; the route's fastest is considered.
void Conv2d::Chooser::cudnn_route(ConvRoute r) {
  auto p = fresh(r);
  p->graph = std::make_unique<fe::graph::Graph>();
  const GraphSpec spec{conv.shape_, conv.shape_.in_channels, N, H, W, conv.dtype_, conv.precision_, conv.act_,
                       p->residual, r};
  describe_graph(*p->graph, spec);
  std::string why;
  if (!list_configs(*p->graph, p->handle, spec, tune, &why)) return refused(r, why);
  const int cap = tune ? kMaxCudnnCandidates : 1;
  std::vector<std::string> seen;
  int built = 0;
  float route_best = -1.f;
  int64_t route_index = -1, route_ws = 0;
  std::string route_name, last_error;
  const int64_t count = p->graph->get_execution_plan_count();
  const auto t0 = std::chrono::steady_clock::now();
  auto over_budget = [&] {
    return route_index >= 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kRouteBudgetSeconds;
  };
  for (int64_t i = 0; i < count && built < cap && !over_budget(); ++i) {
    std::string name;
    int64_t ws = 0;
    if (!build_config(*p->graph, i, &seen, &name, &ws, &last_error)) continue;
    ++built;
    ctx.reserve_workspace(static_cast<std::size_t>(ws));
    p->plan_index = i;
    const float ms = measure(*p, &last_error);
    if (ms < 0.f) continue;
    // enqueue() lists its pointers in this order; a frontend that disagreed would bind them wrongly.
    require(p->graph->get_variant_pack_uids_sorted() == graph_uids(r, p->residual),
            "internal: cudnn-frontend lists the tensors of convolution '" + conv.name() +
                "' in an unexpected order.");
    if (tune) ++candidates;
    if (route_index < 0 || ms < route_best) {
      route_best = ms;
      route_index = i;
      route_ws = ws;
      route_name = name;
    }
  }
  if (route_index < 0) return refused(r, last_error.empty() ? "no engine configuration built" : last_error);
  p->plan_index = route_index;
  p->workspace = route_ws;
  p->engine = "cuDNN " + route_name;
  p->ms = tune ? route_best : -1.f;
  consider(std::move(p));
}

// cuBLASLt for a 1×1 stride-1 convolution: its heuristic's first few algorithms for the GEMM
// y[N·H·W, out] = x[N·H·W, in] · Wᵀ, bias and ReLU in the epilogue, each measured. Timed runs only.
void Conv2d::Chooser::gemm_route() {
  GemmSpec g;
  g.M = static_cast<int>(rows);
  g.N = conv.shape_.out_channels;
  g.K = conv.shape_.in_channels;
  g.b_layout = BLayout::NK;  // the KRSC weight of a 1×1 convolution is [out, in]
  g.ab_dtype = g.d_dtype = conv.dtype_;
  g.precision = conv.precision_;
  g.epilogue = conv.act_ == ConvActivation::Relu ? Epilogue::BiasRelu : Epilogue::Bias;
  std::string why;
  for (int a = 0; a < kMaxGemmCandidates; ++a) {
    g.algo_index = a;
    auto p = fresh(ConvRoute::Gemm);
    try {
      p->gemm = std::make_unique<Gemm>(ctx.cublaslt(), g, Context::kCublasLtWorkspace);
    } catch (const Error& e) {
      if (a == 0) why = e.what();
      break;
    }
    std::string error;
    const float ms = measure(*p, &error);
    if (ms < 0.f) continue;
    ++candidates;
    p->ms = ms;
    p->engine = "cuBLASLt algorithm " + std::to_string(a) + " of its heuristic";
    consider(std::move(p));
  }
  if (!why.empty()) refused(ConvRoute::Gemm, why);
}

std::shared_ptr<Conv2d::Plan> Conv2d::choose(Context& ctx, ConvRoute route, int N, int H, int W, void* y,
                                             const void* x, const void* residual, int* timed) const {
  Chooser c(*this, ctx, N, H, W, y, x, residual);
  // cuDNN's routes, fused first; untimed, Separate only when Fused had nothing.
  for (ConvRoute r : {ConvRoute::Fused, ConvRoute::Separate})
    if ((route == ConvRoute::Auto || route == r) && (c.tune || !c.best)) c.cudnn_route(r);
  // cuBLASLt: untimed runs never take it (they reproduce the cuDNN-only choice).
  const bool gemm_shape = shape_.kernel == 1 && shape_.stride == 1 && shape_.pad == 0;
  if (gemm_shape && c.tune && (route == ConvRoute::Auto || route == ConvRoute::Gemm)) c.gemm_route();
  if (route == ConvRoute::Gemm && !gemm_shape) c.refused(ConvRoute::Gemm, "not a 1x1 stride-1 unpadded convolution");
  if (route == ConvRoute::Gemm && !c.tune && gemm_shape) c.refused(ConvRoute::Gemm, "LAPTIME_CONV_TUNE=off");

  if (!c.best)
    throw Error("no engine can run convolution '" + name() + "' (" + precision_name(precision_) + ", input " +
                shape_text(N, H, W, shape_.in_channels) + ", route " + conv_route_name(route) + "): " + c.refusals);
  c.best->candidates = c.candidates;
  c.best->note = c.refusals;
  // The winner's run comes last on y, so the buffers hold its result (a later timed Gemm would
  // otherwise have left its own), and its workspace is reserved.
  ctx.reserve_workspace(static_cast<std::size_t>(c.best->workspace));
  fe::error_t e = c.best->enqueue(*this, ctx, y, x, residual);
  if (e.is_bad())
    throw Error("cuDNN refused convolution '" + name() + "' on a second run of its chosen plan: " + e.get_message());
  *timed += c.candidates;
  return c.best;
}

namespace {
std::string plan_key(const ConvShape& s, int N, int H, int W, DType dtype, Precision precision, ConvActivation act,
                     bool residual, ConvRoute route, cudaStream_t stream) {
  std::ostringstream os;
  os << s.in_channels << ',' << s.out_channels << ',' << s.kernel << ',' << s.stride << ',' << s.pad << '|' << N
     << ',' << H << ',' << W << '|' << dtype_name(dtype) << ',' << precision_name(precision) << ','
     << (act == ConvActivation::Relu) << ',' << residual << ',' << conv_route_name(route) << ','
     << static_cast<const void*>(stream);
  return os.str();
}
}  // namespace

void Conv2d::prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual, ConvRoute route,
                     ConvPlanCache* cache) {
  const int Ho = shape_.out_size(H), Wo = shape_.out_size(W);
  require(N >= 1 && Ho >= 1 && Wo >= 1, name() + ": an input of " + shape_text(N, H, W, shape_.in_channels) +
                                            " gives no output through a " + std::to_string(shape_.kernel) + "x" +
                                            std::to_string(shape_.kernel) + " convolution.");
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<Plan> p;
  const std::string key = plan_key(shape_, N, H, W, dtype_, precision_, act_, residual != nullptr, route, ctx.stream());
  if (cache) {
    auto it = cache->entries_->plans.find(key);
    if (it != cache->entries_->plans.end()) {
      p = it->second;
      ++cache->reused_;
      // A shared plan still runs once on this layer's buffers, so that y holds this layer's result.
      fe::error_t e = p->enqueue(*this, ctx, y, x, residual);
      if (e.is_bad()) throw Error("cuDNN refused convolution '" + name() + "' with a shared plan: " + e.get_message());
    }
  }
  if (!p) {
    int timed = 0;
    p = choose(ctx, route, N, H, W, y, x, residual, &timed);
    if (cache) {
      cache->entries_->plans[key] = p;
      ++cache->built_;
      cache->timed_ += timed;
    }
  }
  plans_[{N, H, W}] = p;
  if (fp8_candidate()) prepare_fp8(ctx, N, H, W, y, x, residual, *p, key, cache);
  if (cache) cache->seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool Conv2d::fp8_candidate() const {
  return precision_ == Precision::FP8 && shape_.kernel == 1 && shape_.stride == 1 && shape_.pad == 0;
}

// The e4m3 candidate (see conv2d.h): x quantized with the layer's static scale, then
// y = ReLU(s_x·s_w·(x8 · W8ᵀ) + bias + 1·residual) by cuBLASLt, timed as one candidate (both
// kernels inside time_candidate's graph) on the forward's own buffers against `chosen`.
void Conv2d::prepare_fp8(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
                         const Plan& chosen, const std::string& key, ConvPlanCache* cache) {
  if (!fp8_.made()) fp8_.make(ctx, weight_, dtype_, shape_.weight_count(), name());
  auto f = std::make_unique<Fp8Plan>();
  const int64_t rows = int64_t{N} * H * W;
  f->x_elems = rows * shape_.in_channels;
  GemmSpec g;
  g.M = static_cast<int>(rows);
  g.N = shape_.out_channels;
  g.K = shape_.in_channels;
  g.b_layout = BLayout::NK;  // the KRSC weight of a 1×1 convolution is [out, in]
  g.ab_dtype = DType::F8E4M3;
  g.d_dtype = dtype_;
  g.precision = precision_;
  g.epilogue = act_ == ConvActivation::Relu ? Epilogue::BiasRelu : Epilogue::Bias;
  g.a_scale = fp8_.input_scale();
  g.b_scale = fp8_.weight_scale();
  g.fp8_fast_accum = fp8_fast_accum();
  std::string refused;
  try {
    f->gemm = std::make_unique<Gemm>(ctx.cublaslt(), g, Context::kCublasLtWorkspace);
  } catch (const Error& e) {
    refused = e.what();
  }
  const GemmTuner::Fp8Choice* cached = nullptr;
  if (cache) {
    const auto it = cache->entries_->fp8.find(key);
    if (it != cache->entries_->fp8.end()) cached = &it->second;
  }
  GemmTuner::Fp8Choice& c = f->choice;
  if (cached) {
    c = *cached;
  } else if (!f->gemm) {
    c.note = "cuBLASLt has no fp8 plan: " + first_line(refused);
  } else {
    DeviceBuffer x8(static_cast<std::size_t>(f->x_elems));
    const float beta = residual ? 1.f : 0.f;
    auto run8 = [&] {
      quantize_fp8(x8.data(), fp8_.input_inv_scale(), dtype_, x, f->x_elems, ctx.stream());
      f->gemm->run(ctx, y, x8.data(), fp8_.weight8(), bias_, 1.f, beta, residual);
      return true;
    };
    std::string why8, why16;
    const bool tune = tuning_enabled();
    if (tune) {  // the GEMM's own algorithm first, among cuBLASLt's first few, on x8 as the timing fills it
      quantize_fp8(x8.data(), fp8_.input_inv_scale(), dtype_, x, f->x_elems, ctx.stream());
      float ms = 0.f;
      f->gemm->autotune(ctx, y, x8.data(), fp8_.weight8(), bias_, &ms);
    }
    c.fp8_ms = time_candidate(ctx.stream(), run8, &why8);
    // The bf16 side: what prepare() chose, as it measured it (the same method), or timed now.
    c.bf16_ms = chosen.ms >= 0.f ? chosen.ms
                                 : time_candidate(
                                       ctx.stream(),
                                       [&] { return chosen.enqueue(*this, ctx, y, x, residual).is_good(); }, &why16);
    const Fp8Policy policy = fp8_gemm_policy();
    std::vector<std::string> notes;
    if (c.fp8_ms < 0.f) notes.push_back("the fp8 plan failed to run: " + first_line(why8));
    if (c.bf16_ms < 0.f) notes.push_back("the bf16 plan failed to time: " + first_line(why16));
    if (policy == Fp8Policy::Never) notes.push_back("LAPTIME_FP8_GEMM=bf16");
    for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
    c.fp8 = c.fp8_ms >= 0.f && (policy == Fp8Policy::Always ||
                                (policy == Fp8Policy::Auto && (c.bf16_ms < 0.f || c.fp8_ms < c.bf16_ms)));
    if (cache) cache->entries_->fp8[key] = c;
    // The buffers hold the chosen plan's result, as choose() leaves them.
    fe::error_t e = chosen.enqueue(*this, ctx, y, x, residual);
    if (e.is_bad()) throw Error("cuDNN refused convolution '" + name() + "' after its fp8 timing: " + e.get_message());
  }
  c.fp8 = c.fp8 && f->gemm != nullptr;
  if (c.fp8) f->x8 = DeviceBuffer(static_cast<std::size_t>(f->x_elems));
  fp8_plans_[{N, H, W}] = std::move(f);
}

bool Conv2d::runs_fp8(int N, int H, int W) const {
  const auto it = fp8_plans_.find({N, H, W});
  return it != fp8_plans_.end() && it->second->choice.fp8;
}

std::string Conv2d::fp8_report(int N, int H, int W) const {
  const auto it = fp8_plans_.find({N, H, W});
  if (it == fp8_plans_.end()) return "";
  const GemmTuner::Fp8Choice& c = it->second->choice;
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << (c.fp8 ? "fp8" : "bf16");
  if (c.fp8_ms >= 0.f) os << " (fp8 " << c.fp8_ms << " ms with its quantize pass";
  if (c.fp8_ms >= 0.f && c.bf16_ms >= 0.f) os << ", bf16 " << c.bf16_ms << " ms";
  if (c.fp8_ms >= 0.f) os << ")";
  if (!c.note.empty()) os << " [" << c.note << "]";
  return os.str();
}

void Conv2d::begin_calibration(const Context& ctx) {
  if (!fp8_.made()) return;
  fp8_.begin_calibration(ctx);
  calibrating_ = true;
}

void Conv2d::end_calibration(const Context& ctx) {
  if (!calibrating_) return;
  fp8_.end_calibration(ctx, kFp8ActivationMargin);
  calibrating_ = false;
}

// forward() checks with `if`, not require(): require's message would be built on every call.
const Conv2d::Plan& Conv2d::plan(int N, int H, int W) const {
  auto it = plans_.find({N, H, W});
  if (it == plans_.end())
    throw Error("internal: convolution '" + name() + "' was not prepared for an input of " +
                shape_text(N, H, W, shape_.in_channels) + ".");
  return *it->second;
}

ConvRoute Conv2d::route(int N, int H, int W) const { return plan(N, H, W).route; }

LayerCost Conv2d::cost(const std::string& parent, int N, int H, int W) const {
  const bool residual = plan(N, H, W).residual;
  LayerCost c = conv_cost(name(), parent, shape_, N, H, W, residual, dtype_);
  if (precision_ != Precision::FP8) return c;
  c.precision = runs_fp8(N, H, W) ? "fp8" : "bf16";  // the roofline bounds each by its own ceiling
  if (runs_fp8(N, H, W))  // 1-byte weights; the bias, the input it quantizes and y stay bf16
    c.weight_bytes = double(shape_.weight_count()) + shape_.out_channels * static_cast<double>(dtype_size(dtype_));
  return c;
}

std::string Conv2d::describe(int N, int H, int W) const {
  const Plan& p = plan(N, H, W);
  std::ostringstream os;
  os << conv_route_name(p.route) << ", " << p.engine << ", " << p.workspace << " B workspace";
  if (p.ms >= 0.f) os << ", " << std::fixed << std::setprecision(3) << p.ms << " ms (fastest of " << p.candidates << ")";
  if (!p.note.empty()) os << " [" << p.note << "]";
  const std::string fp8 = fp8_report(N, H, W);
  if (!fp8.empty()) os << "; fp8 candidate: " << fp8;
  return os.str();
}

void Conv2d::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, const void* residual) const {
  const Plan& p = plan(N, H, W);
  if (p.stream != ctx.stream())
    throw Error("internal: convolution '" + name() + "' runs on a stream it was not prepared for.");
  if (p.residual != (residual != nullptr))
    throw Error("internal: convolution '" + name() + "' was prepared " + (p.residual ? "with" : "without") +
                " a residual.");
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  const auto f8 = fp8_plans_.find({N, H, W});
  if (f8 != fp8_plans_.end()) {  // fp8 precision, a 1×1 stride-1 convolution
    const Fp8Plan& f = *f8->second;
    if (calibrating_) {
      fp8_.record_input(ctx, x, dtype_, f.x_elems);  // then the bf16 plan, below
    } else if (f.choice.fp8) {
      if (!fp8_.calibrated())
        throw Error("internal: convolution '" + name() + "' runs fp8 before its calibration (calibrate the model first).");
      quantize_fp8(f.x8.data(), fp8_.input_inv_scale(), dtype_, x, f.x_elems, ctx.stream());
      f.gemm->run(ctx, y, f.x8.data(), fp8_.weight8(), bias_, 1.f, residual ? 1.f : 0.f, residual);
      return;
    }
  }
  fe::error_t e = p.enqueue(*this, ctx, y, x, residual);
  if (e.is_bad())
    fail_library_call("cuDNN", "cudnn_frontend::graph::Graph::execute", e.get_message().c_str(), __func__, __FILE__,
                      __LINE__);
}

}  // namespace laptime
