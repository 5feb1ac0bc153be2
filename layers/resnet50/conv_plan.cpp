#include "layers/resnet50/conv_plan.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <sstream>
#include <vector>

// Built without the frontend's JSON (de)serialization (CUDNN_FRONTEND_SKIP_JSON_LIB,
// layers/resnet50/resnet50.cmake), which we never use.
#include <cudnn_frontend.h>

#include "core/check.h"
#include "core/env_switches.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"

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
  bool residual;    // the fused graph adds z
  ConvRoute route;  // Fused: conv → bias → [z] → [ReLU]; Separate: conv alone
};

// Describes the graph of `s` on `g`: explicit dims and NHWC strides for every tensor the
// caller passes, fp32 for the virtual ones between the nodes.
void describe_graph(fe::graph::Graph& g, const GraphSpec& s) {
  const fe::DataType_t io = s.dtype == DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT;
  g.set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t K = s.shape.out_channels, R = s.shape.kernel;
  const int64_t Ho = s.shape.out_size(static_cast<int>(s.H)), Wo = s.shape.out_size(static_cast<int>(s.W));
  using Tensor = fe::graph::Tensor_attributes;
  auto x = g.tensor(
      Tensor().set_name("x").set_uid(kUidX).set_dim({s.N, s.C, s.H, s.W}).set_stride(nhwc_strides(s.C, s.H, s.W)));
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
      auto z = g.tensor(
          Tensor().set_name("z").set_uid(kUidResidual).set_dim({s.N, K, Ho, Wo}).set_stride(nhwc_strides(K, Ho, Wo)));
      y = g.pointwise(y, z, Pointwise().set_name("add_residual").set_mode(fe::PointwiseMode_t::ADD));
    }
    if (s.act == ConvActivation::Relu)
      y = g.pointwise(y, Pointwise().set_name("relu").set_mode(fe::PointwiseMode_t::RELU_FWD));
  }
  y->set_output(true)
      .set_name("y")
      .set_uid(kUidY)
      .set_data_type(io)
      .set_dim({s.N, K, Ho, Wo})
      .set_stride(nhwc_strides(K, Ho, Wo));
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
// The final round (LAPTIME_CONV_TUNE=final, opt-in: measured on an H100 it left the B1 bf16 lap
// where it was, history/resnet50-notes.md, "A final round"). Each candidate's first time is the
// least of a few replays taken right after it was built, every candidate at its own moment of the
// card's clock, and at batch 1 a convolution takes 3-12 us where its best candidates differ by
// fractions of one. So the plans within kFinalMargin of the fastest, at most kMaxFinalists, are
// timed again kFinalRounds times in turn (A B C A B C ...), and the least of each one's final
// times decides.
constexpr float kFinalMargin = 0.10f;
constexpr int kMaxFinalists = 4;
constexpr int kFinalRounds = 3;

// Each timing run kFinalRounds times in turn (A B C A B C ...): the least of each one's times, -1
// where none of its runs gave one. The final round's, and the fp8-or-bf16 comparison after it.
std::vector<float> least_in_turn(const std::vector<std::function<float()>>& timings) {
  std::vector<float> least(timings.size(), -1.f);
  for (int round = 0; round < kFinalRounds; ++round)
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const float ms = timings[i]();
      if (ms >= 0.f && (least[i] < 0.f || ms < least[i])) least[i] = ms;
    }
  return least;
}

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
      std::vector<std::string> engines = env::cudnn_deselect_engines();
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

}  // namespace

std::string conv_shape_text(int N, int H, int W, int C) {
  std::ostringstream os;
  os << "[" << N << ", " << H << ", " << W << ", " << C << "]";
  return os.str();
}

const char* conv_route_name(ConvRoute r) {
  switch (r) {
    case ConvRoute::Auto:
      return "auto";
    case ConvRoute::Fused:
      return "fused";
    case ConvRoute::Separate:
      return "separate";
    case ConvRoute::Gemm:
      return "gemm";
  }
  return "?";
}

struct ConvPlan::Graph {
  fe::graph::Graph graph;  // its candidate plans built
  int64_t plan_index = 0;  // the chosen one
};

ConvPlan::ConvPlan() = default;
ConvPlan::~ConvPlan() = default;

bool ConvPlan::enqueue(const ConvProblem& c, const Context& ctx, void* y, const void* x, const void* residual,
                       std::string* why) const {
  if (route == ConvRoute::Gemm) {
    // y[rows, out] = ReLU(x[rows, in] · W[out, in]ᵀ + bias + 1·residual)
    gemm->run(ctx, y, x, c.weight, c.bias, 1.f, residual ? 1.f : 0.f, residual);
    return true;
  }
  // The frontend's raw-pointer execute copies the variant-pack template it prepared at build,
  // patches these in, and wraps cudnnBackendExecute in one cuDNN variant-pack descriptor.
  void* ptrs[5];
  int n = 0;
  ptrs[n++] = const_cast<void*>(x);
  ptrs[n++] = const_cast<void*>(c.weight);
  if (route == ConvRoute::Fused) {
    ptrs[n++] = const_cast<void*>(c.bias);
    if (residual) ptrs[n++] = const_cast<void*>(residual);
  }
  ptrs[n++] = y;
  fe::error_t e = graph->graph.execute_plan_at_index(handle, ptrs, n, ctx.workspace(), graph->plan_index);
  if (e.is_bad()) {
    *why = e.get_message();
    return false;
  }
  if (route == ConvRoute::Separate)
    conv_epilogue_forward(c.dtype, y, c.bias, residual, out_rows, c.shape.out_channels, c.act, stream);
  return true;
}

std::shared_ptr<ConvPlan> ConvPlanCache::reuse(const std::string& key) {
  const auto it = plans_.find(key);
  if (it == plans_.end()) return nullptr;
  ++reused_;
  return it->second;
}

void ConvPlanCache::add(const std::string& key, std::shared_ptr<ConvPlan> plan, int timed) {
  plans_[key] = std::move(plan);
  ++built_;
  timed_ += timed;
}

const GemmTuner::Fp8Choice* ConvPlanCache::fp8_choice(const std::string& key) const {
  const auto it = fp8_.find(key);
  return it == fp8_.end() ? nullptr : &it->second;
}

const ConvPlanCache::TimedChoice* ConvPlanCache::timed_choice(const std::string& key) const {
  const auto it = choices_.find(key);
  return it == choices_.end() ? nullptr : &it->second;
}

void ConvPlanCache::set_timed_choice(const std::string& key, const TimedChoice& c) {
  choices_[key] = c;
  ++built_;
  timed_ += c.candidates;
}

namespace {

// choose_conv_plan()'s search for one input shape: the candidates it builds and measures on the
// forward's own buffers, the fastest so far, and the routes that had nothing.
struct Chooser {
  Chooser(const ConvProblem& conv, const std::string& name, Context& ctx, int N, int H, int W, void* y, const void* x,
          const void* residual, CandidateLaunch launch)
      : conv(conv),
        name(name),
        ctx(ctx),
        N(N),
        H(H),
        W(W),
        y(y),
        x(x),
        residual(residual),
        tune(env::conv_tune()),
        launch(launch),
        rows(int64_t{N} * conv.shape.out_size(H) * conv.shape.out_size(W)) {}

  const ConvProblem& conv;
  const std::string& name;  // the layer's, for the sentences
  Context& ctx;
  int N, H, W;
  void* y;
  const void* x;
  const void* residual;
  bool tune;               // time the candidates (LAPTIME_CONV_TUNE is not off)
  CandidateLaunch launch;  // how (core/timing.h): in a graph, or directly for an eager loop
  int64_t rows;            // N·Ho·Wo
  std::shared_ptr<ConvPlan> best;
  std::vector<std::shared_ptr<ConvPlan>> timed;  // every plan considered with a time, for the final round
  std::string refusals;                          // the routes that had nothing, and why
  int candidates = 0;                            // timed, all routes

  std::shared_ptr<ConvPlan> fresh(ConvRoute r) const {
    auto p = std::make_shared<ConvPlan>();
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
  float measure(const ConvPlan& p, std::string* error) const {
    auto run = [&] { return p.enqueue(conv, ctx, y, x, residual, error); };
    if (!tune) return run() ? 0.f : -1.f;
    return time_candidate(ctx.stream(), run, nullptr, launch);
  }
  // Keeps p when it is the first plan that runs or, timed, the fastest.
  void consider(std::shared_ptr<ConvPlan> p) {
    if (tune) timed.push_back(p);
    if (!best || (tune && p->ms < best->ms)) best = std::move(p);
  }
  void cudnn_route(ConvRoute r);
  void gemm_route();
  void final_round();
};

// A cuDNN route: every listed configuration, deduplicated by name, built until the cap (and
// the host-time budget once one works), each measured; the route's fastest is considered.
void Chooser::cudnn_route(ConvRoute r) {
  auto p = fresh(r);
  p->graph = std::make_unique<ConvPlan::Graph>();
  fe::graph::Graph& g = p->graph->graph;
  const GraphSpec spec{conv.shape, conv.shape.in_channels, N,        H,           W,
                       conv.dtype, conv.precision,         conv.act, p->residual, r};
  describe_graph(g, spec);
  std::string why;
  if (!list_configs(g, p->handle, spec, tune, &why)) return refused(r, why);
  const int cap = tune ? kMaxCudnnCandidates : 1;
  std::vector<std::string> seen;
  int built = 0;
  float route_best = -1.f;
  int64_t route_index = -1, route_ws = 0;
  std::string route_name, last_error;
  const int64_t count = g.get_execution_plan_count();
  const auto t0 = std::chrono::steady_clock::now();
  auto over_budget = [&] {
    return route_index >= 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kRouteBudgetSeconds;
  };
  for (int64_t i = 0; i < count && built < cap && !over_budget(); ++i) {
    std::string name;
    int64_t ws = 0;
    if (!build_config(g, i, &seen, &name, &ws, &last_error)) continue;
    ++built;
    ctx.reserve_workspace(static_cast<std::size_t>(ws));
    p->graph->plan_index = i;
    const float ms = measure(*p, &last_error);
    if (ms < 0.f) continue;
    // enqueue() lists its pointers in this order; a frontend that disagreed would bind them wrongly.
    require(g.get_variant_pack_uids_sorted() == graph_uids(r, p->residual),
            "internal: cudnn-frontend lists the tensors of convolution '" + name + "' in an unexpected order.");
    if (tune) ++candidates;
    if (route_index < 0 || ms < route_best) {
      route_best = ms;
      route_index = i;
      route_ws = ws;
      route_name = name;
    }
  }
  if (route_index < 0) return refused(r, last_error.empty() ? "no engine configuration built" : last_error);
  p->graph->plan_index = route_index;
  p->workspace = route_ws;
  p->engine = "cuDNN " + route_name;
  p->ms = tune ? route_best : -1.f;
  consider(std::move(p));
}

// cuBLASLt for a 1×1 stride-1 convolution: its heuristic's first few algorithms for the GEMM
// y[N·H·W, out] = x[N·H·W, in] · Wᵀ, bias and ReLU in the epilogue, each measured. Timed runs only.
void Chooser::gemm_route() {
  GemmSpec g;
  g.M = static_cast<int>(rows);
  g.N = conv.shape.out_channels;
  g.K = conv.shape.in_channels;
  g.b_layout = BLayout::NK;  // the KRSC weight of a 1×1 convolution is [out, in]
  g.ab_dtype = g.d_dtype = conv.dtype;
  g.precision = conv.precision;
  g.epilogue = conv.act == ConvActivation::Relu ? Epilogue::BiasRelu : Epilogue::Bias;
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
    // (A spec cuBLASLt has no algorithm for builds on CUTLASS's first kernel alone: Gemm's constructor.)
    p->engine = p->gemm->backend() == "cuBLASLt" ? "cuBLASLt algorithm " + std::to_string(a) + " of its heuristic"
                                                 : p->gemm->backend();
    const bool first = a == 0;
    // CUTLASS's kernels for the same product (bf16 on sm_90: ReLU + bias + the residual in one
    // epilogue, no memset beside them), each schedule timed as cuBLASLt's algorithms are.
    const int cutlass = first ? p->gemm->cutlass_candidate_count() : 0;
    const int listed = first ? p->gemm->candidate_count() - cutlass : 0;
    std::shared_ptr<ConvPlan> kept = p;
    consider(std::move(p));
    for (int i = 0; i < cutlass; ++i) {
      auto q = fresh(ConvRoute::Gemm);
      q->gemm = std::make_unique<Gemm>(ctx.cublaslt(), g, Context::kCublasLtWorkspace);
      q->gemm->set_choice(kept->gemm->candidate(listed + i));
      const float t = measure(*q, &error);
      if (t < 0.f) continue;
      ++candidates;
      q->ms = t;
      q->engine = q->gemm->backend();
      consider(std::move(q));
    }
  }
  if (!why.empty()) refused(ConvRoute::Gemm, why);
}

// The plans within kFinalMargin of the fastest (a cuDNN route's best, each cuBLASLt or CUTLASS
// candidate), timed again in turn; the least final time picks, and is the plan's time.
void Chooser::final_round() {
  if (!tune || !env::conv_final_round() || !best) return;
  std::vector<std::shared_ptr<ConvPlan>> finalists;
  for (const auto& p : timed)
    if (p->ms >= 0.f && p->ms <= best->ms * (1.f + kFinalMargin)) finalists.push_back(p);
  std::stable_sort(finalists.begin(), finalists.end(), [](const auto& a, const auto& b) { return a->ms < b->ms; });
  if (finalists.size() > kMaxFinalists) finalists.resize(kMaxFinalists);
  if (finalists.size() < 2) return;
  std::string error;
  std::vector<std::function<float()>> timings;
  for (const auto& f : finalists)
    timings.push_back([&, f] {
      ctx.reserve_workspace(static_cast<std::size_t>(f->workspace));
      return measure(*f, &error);
    });
  const std::vector<float> least = least_in_turn(timings);
  int pick = -1;
  for (std::size_t i = 0; i < finalists.size(); ++i)
    if (least[i] >= 0.f && (pick < 0 || least[i] < least[pick])) pick = static_cast<int>(i);
  if (pick < 0) return;  // none ran again: the first round's choice stands
  best = finalists[pick];
  best->ms = least[pick];
  best->finalists = static_cast<int>(finalists.size());
}

}  // namespace

std::shared_ptr<ConvPlan> choose_conv_plan(Context& ctx, const ConvProblem& conv, const std::string& name,
                                           ConvRoute route, int N, int H, int W, void* y, const void* x,
                                           const void* residual, int* timed, GemmTuner::Replay replay) {
  Chooser c(conv, name, ctx, N, H, W, y, x, residual, GemmTuner::launch_for(replay));
  // cuDNN's routes, fused first; untimed, Separate only when Fused had nothing.
  for (ConvRoute r : {ConvRoute::Fused, ConvRoute::Separate})
    if ((route == ConvRoute::Auto || route == r) && (c.tune || !c.best)) c.cudnn_route(r);
  // cuBLASLt: untimed runs never take it (they reproduce the cuDNN-only choice).
  const bool gemm_shape = conv.gemm_shape();
  if (gemm_shape && c.tune && (route == ConvRoute::Auto || route == ConvRoute::Gemm)) c.gemm_route();
  if (route == ConvRoute::Gemm && !gemm_shape) c.refused(ConvRoute::Gemm, "not a 1x1 stride-1 unpadded convolution");
  if (route == ConvRoute::Gemm && !c.tune && gemm_shape) c.refused(ConvRoute::Gemm, "LAPTIME_CONV_TUNE=off");
  c.final_round();

  if (!c.best)
    throw Error("no engine can run convolution '" + name + "' (" + precision_name(conv.precision) + ", input " +
                conv_shape_text(N, H, W, conv.shape.in_channels) + ", route " + conv_route_name(route) +
                "): " + c.refusals);
  c.best->candidates = c.candidates;
  c.best->note = c.refusals;
  // The winner's run comes last on y, so the buffers hold its result (a later timed Gemm would
  // otherwise have left its own), and its workspace is reserved.
  ctx.reserve_workspace(static_cast<std::size_t>(c.best->workspace));
  std::string why;
  if (!c.best->enqueue(conv, ctx, y, x, residual, &why))
    throw Error("cuDNN refused convolution '" + name + "' on a second run of its chosen plan: " + why);
  *timed += c.candidates;
  return c.best;
}

std::string conv_plan_key(const ConvProblem& c, int N, int H, int W, bool residual, ConvRoute route,
                          cudaStream_t stream) {
  const ConvShape& s = c.shape;
  std::ostringstream os;
  os << s.in_channels << ',' << s.out_channels << ',' << s.kernel << ',' << s.stride << ',' << s.pad << '|' << N << ','
     << H << ',' << W << '|' << dtype_name(c.dtype) << ',' << precision_name(c.precision) << ','
     << (c.act == ConvActivation::Relu) << ',' << residual << ',' << conv_route_name(route) << ','
     << static_cast<const void*>(stream);
  return os.str();
}

GemmTuner::Fp8Choice choose_fp8_conv(const Context& ctx, const ConvProblem& conv, const std::string& name,
                                     const Fp8Weight& fp8, Gemm* gemm, const std::string& refused,
                                     const ConvPlan& chosen, int64_t x_elems, void* y, const void* x,
                                     const void* residual, GemmTuner::Replay replay) {
  GemmTuner::Fp8Choice c;
  if (!gemm) {
    c.note = "cuBLASLt has no fp8 plan: " + first_line(refused);
    return c;
  }
  DeviceBuffer x8(static_cast<std::size_t>(x_elems));
  const float beta = residual ? 1.f : 0.f;
  auto run8 = [&] {
    quantize_fp8(x8.data(), fp8.input_inv_scale(), conv.dtype, x, x_elems, ctx.stream());
    gemm->run(ctx, y, x8.data(), fp8.weight8(), conv.bias, 1.f, beta, residual);
    return true;
  };
  std::string why8, why16, ignored;
  const CandidateLaunch launch = GemmTuner::launch_for(replay);
  if (env::conv_tune()) {  // the GEMM's own algorithm first, among cuBLASLt's first few, on x8 as the timing fills it
    quantize_fp8(x8.data(), fp8.input_inv_scale(), conv.dtype, x, x_elems, ctx.stream());
    float ms = 0.f;
    gemm->autotune(ctx, y, x8.data(), fp8.weight8(), conv.bias, &ms, launch);
  }
  c.fp8_ms = time_candidate(ctx.stream(), run8, &why8, launch);
  // The bf16 side: what choose_conv_plan chose, as it measured it (the same method), or timed now.
  auto run16 = [&] { return chosen.enqueue(conv, ctx, y, x, residual, &ignored); };
  c.bf16_ms = chosen.ms >= 0.f ? chosen.ms : time_candidate(ctx.stream(), run16, &why16, launch);
  if (chosen.finalists > 1 && c.fp8_ms >= 0.f && c.bf16_ms >= 0.f) {
    // The bf16 time is the least of a final round's: one fp8 time against it would lean to bf16.
    // So both sides again, in turn, as often, each the least of its own.
    const std::vector<float> least =
        least_in_turn({[&] { return time_candidate(ctx.stream(), run8, &why8, launch); },
                       [&] { return time_candidate(ctx.stream(), run16, &why16, launch); }});
    if (least[0] >= 0.f && least[1] >= 0.f) {
      c.fp8_ms = least[0];
      c.bf16_ms = least[1];
    }
  }
  const bool eager = replay == GemmTuner::Replay::Eager;
  if (eager) {  // an eager loop pays each side's launches on the host: the quantize pass is one more
    c.fp8_ms = eager_charge_ms(c.fp8_ms, ctx.stream(), run8, &why8);
    c.bf16_ms = eager_charge_ms(c.bf16_ms, ctx.stream(), run16, &why16);
  }
  const Fp8Policy policy = env::fp8_gemm();
  std::vector<std::string> notes;
  if (c.fp8_ms < 0.f) notes.push_back("the fp8 plan failed to run: " + first_line(why8));
  if (c.bf16_ms < 0.f) notes.push_back("the bf16 plan failed to time: " + first_line(why16));
  if (policy == Fp8Policy::Never) notes.push_back("LAPTIME_FP8_GEMM=bf16");
  if (eager) notes.push_back(GemmTuner::eager_note(replay));
  for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
  c.fp8 = c.fp8_ms >= 0.f &&
          (policy == Fp8Policy::Always || (policy == Fp8Policy::Auto && (c.bf16_ms < 0.f || c.fp8_ms < c.bf16_ms)));
  // The buffers hold the chosen plan's result, as choose_conv_plan leaves them.
  std::string why;
  if (!chosen.enqueue(conv, ctx, y, x, residual, &why))
    throw Error("cuDNN refused convolution '" + name + "' after its fp8 timing: " + why);
  return c;
}

}  // namespace laptime
