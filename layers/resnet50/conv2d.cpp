#include "layers/resnet50/conv2d.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <vector>

#include "core/check.h"
#include "core/env_switches.h"
#include "kernels/fp8.cuh"
#include "layers/gemm.h"
#include "layers/gemm_tuner.h"

namespace laptime {

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

FoldedConv fold_batchnorm(const ConvShape& s, const std::vector<float>& w_oihw, const std::vector<float>& gamma,
                          const std::vector<float>& beta, const std::vector<float>& mean, const std::vector<float>& var,
                          float eps, const std::string& bn_name) {
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

// fp8: one shape's e4m3 GEMM, owned by its layer (the descriptor holds the layer's scale
// pointers), and the choice, which identical layers share through the cache.
struct Conv2d::Fp8Plan {
  std::unique_ptr<Gemm> gemm;   // nullptr when cuBLASLt had no plan
  GemmTuner::Fp8Choice choice;  // fp8_ms: quantize + GEMM; bf16_ms: the chosen bf16/cuDNN plan
  DeviceBuffer x8;              // [N·H·W, in] e4m3, when chosen
  int64_t x_elems = 0;          // N·H·W·in
};

Conv2d::Conv2d(const DeviceWeights& w, const std::string& prefix, const ConvShape& shape, ConvActivation act,
               Precision precision)
    : name_(prefix), problem_{shape, w.dtype(), precision, act, w.get(prefix + ".weight"), w.get(prefix + ".bias")} {}

Conv2d::~Conv2d() = default;
Conv2d::Conv2d(Conv2d&&) noexcept = default;

void Conv2d::prepare(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual, ConvRoute route,
                     ConvPlanCache* cache) {
  const ConvShape& s = problem_.shape;
  const int Ho = s.out_size(H), Wo = s.out_size(W);
  require(N >= 1 && Ho >= 1 && Wo >= 1, name() + ": an input of " + conv_shape_text(N, H, W, s.in_channels) +
                                            " gives no output through a " + std::to_string(s.kernel) + "x" +
                                            std::to_string(s.kernel) + " convolution.");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string key = conv_plan_key(problem_, N, H, W, residual != nullptr, route, ctx.stream());
  std::shared_ptr<ConvPlan> p = cache ? cache->reuse(key) : nullptr;
  if (p) {
    // A shared plan still runs once on this layer's buffers, so that y holds this layer's result.
    std::string why;
    if (!p->enqueue(problem_, ctx, y, x, residual, &why))
      throw Error("cuDNN refused convolution '" + name() + "' with a shared plan: " + why);
  } else {
    int timed = 0;
    p = choose_conv_plan(ctx, problem_, name(), route, N, H, W, y, x, residual, &timed,
                         cache ? cache->replay() : GemmTuner::Replay::Graph);
    if (cache) cache->add(key, p, timed);
  }
  plans_[{N, H, W}] = p;
  if (fp8_candidate()) prepare_fp8(ctx, N, H, W, y, x, residual, *p, key, cache);
  if (cache) cache->add_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

bool Conv2d::fp8_candidate() const {
  return fp8_offered_ && problem_.precision == Precision::FP8 && problem_.gemm_shape();
}

// The e4m3 candidate (see the top of conv2d.h): its GEMM, with this layer's scales, and the
// choice, shared with the identical layers through the cache or measured (choose_fp8_conv).
void Conv2d::prepare_fp8(Context& ctx, int N, int H, int W, void* y, const void* x, const void* residual,
                         const ConvPlan& chosen, const std::string& key, ConvPlanCache* cache) {
  const ConvShape& s = problem_.shape;
  if (!fp8_.made()) fp8_.make(ctx, problem_.weight, problem_.dtype, s.weight_count(), name());
  auto f = std::make_unique<Fp8Plan>();
  const int64_t rows = int64_t{N} * H * W;
  f->x_elems = rows * s.in_channels;
  GemmSpec g;
  g.M = static_cast<int>(rows);
  g.N = s.out_channels;
  g.K = s.in_channels;
  g.b_layout = BLayout::NK;  // the KRSC weight of a 1×1 convolution is [out, in]
  g.ab_dtype = DType::F8E4M3;
  g.d_dtype = problem_.dtype;
  g.precision = problem_.precision;
  g.epilogue = problem_.act == ConvActivation::Relu ? Epilogue::BiasRelu : Epilogue::Bias;
  g.a_scale = fp8_.input_scale();
  g.b_scale = fp8_.weight_scale();
  g.fp8_fast_accum = env::fp8_fast_accum();
  std::string refused;
  try {
    f->gemm = std::make_unique<Gemm>(ctx.cublaslt(), g, Context::kCublasLtWorkspace);
  } catch (const Error& e) {
    refused = e.what();
  }
  GemmTuner::Fp8Choice& c = f->choice;
  if (const GemmTuner::Fp8Choice* cached = cache ? cache->fp8_choice(key) : nullptr) {
    c = *cached;
  } else {
    c = choose_fp8_conv(ctx, problem_, name(), fp8_, f->gemm.get(), refused, chosen, f->x_elems, y, x, residual,
                        cache ? cache->replay() : GemmTuner::Replay::Graph);
    if (cache && f->gemm) cache->set_fp8_choice(key, c);
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
const ConvPlan& Conv2d::plan(int N, int H, int W) const {
  auto it = plans_.find({N, H, W});
  if (it == plans_.end())
    throw Error("internal: convolution '" + name() + "' was not prepared for an input of " +
                conv_shape_text(N, H, W, problem_.shape.in_channels) + ".");
  return *it->second;
}

ConvRoute Conv2d::route(int N, int H, int W) const { return plan(N, H, W).route; }

LayerCost Conv2d::cost(const std::string& parent, int N, int H, int W) const {
  const bool residual = plan(N, H, W).residual;
  LayerCost c = conv_cost(name(), parent, problem_.shape, N, H, W, residual, problem_.dtype);
  if (problem_.precision != Precision::FP8) return c;
  c.precision = runs_fp8(N, H, W) ? "fp8" : "bf16";  // the roofline bounds each by its own ceiling
  if (runs_fp8(N, H, W))                             // 1-byte weights; the bias, the input it quantizes and y stay bf16
    c.weight_bytes = double(problem_.shape.weight_count()) +
                     problem_.shape.out_channels * static_cast<double>(dtype_size(problem_.dtype));
  return c;
}

std::string Conv2d::describe(int N, int H, int W) const {
  const ConvPlan& p = plan(N, H, W);
  std::ostringstream os;
  os << conv_route_name(p.route) << ", " << p.engine << ", " << p.workspace << " B workspace";
  if (p.ms >= 0.f)
    os << ", " << std::fixed << std::setprecision(3) << p.ms << " ms (fastest of " << p.candidates
       << (p.finalists > 0 ? ", then of " + std::to_string(p.finalists) + " timed again" : std::string()) << ")";
  if (!p.note.empty()) os << " [" << p.note << "]";
  const std::string fp8 = fp8_report(N, H, W);
  if (!fp8.empty()) os << "; fp8 candidate: " << fp8;
  return os.str();
}

void Conv2d::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, const void* residual) const {
  const ConvPlan& p = plan(N, H, W);
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
      fp8_.record_input(ctx, x, problem_.dtype, f.x_elems);  // then the bf16 plan, below
    } else if (f.choice.fp8) {
      if (!fp8_.calibrated())
        throw Error("internal: convolution '" + name() +
                    "' runs fp8 before its calibration (calibrate the model first).");
      quantize_fp8(f.x8.data(), fp8_.input_inv_scale(), problem_.dtype, x, f.x_elems, ctx.stream());
      f.gemm->run(ctx, y, f.x8.data(), fp8_.weight8(), problem_.bias, 1.f, residual ? 1.f : 0.f, residual);
      return;
    }
  }
  std::string why;
  if (!p.enqueue(problem_, ctx, y, x, residual, &why))
    fail_library_call("cuDNN", "cudnn_frontend::graph::Graph::execute", why.c_str(), __func__, __FILE__, __LINE__);
}

}  // namespace laptime
