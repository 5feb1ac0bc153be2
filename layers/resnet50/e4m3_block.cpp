#include "layers/resnet50/e4m3_block.h"

#include <functional>
#include <iomanip>
#include <sstream>

#include "core/check.h"
#include "core/env_switches.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"

namespace laptime {

namespace {

// CUTLASS's kernels that compute conv3 on the stream: e4m3 operands, ReLU + bias, e4m3 C and D.
bool residual_stream_kernel(const CutlassGemmKernel& k) {
  return k.ab_dtype() == DType::F8E4M3 && k.d_dtype() == DType::F8E4M3 && k.has_c() && k.c_dtype() == DType::F8E4M3 &&
         k.epilogue() == CutlassEpilogue::ReluBias;
}

std::vector<const CutlassGemmKernel*> residual_stream_kernels(int device) {
  std::vector<const CutlassGemmKernel*> v;
  for (const CutlassGemmKernel* k : cutlass_gemm_kernels(device))
    if (residual_stream_kernel(*k)) v.push_back(k);
  return v;
}

// How the candidates are launched while timed: as the model's loop will run (the cache's replay).
CandidateLaunch launch_of(const ConvPlanCache* cache) {
  return GemmTuner::launch_for(cache ? cache->replay() : GemmTuner::Replay::Graph);
}

// The GEMM's candidates (cuBLASLt's ranked algorithms, the CUTLASS kernels that compute it) timed
// on these operands and the fastest kept (Gemm::autotune), or the choice of an identical GEMM
// through the cache. Returns the chosen time.
float tune(const Context& ctx, Gemm& g, const std::string& what, void* d, const void* a, const void* b,
           const void* bias, ConvPlanCache* cache) {
  const GemmSpec& s = g.spec();
  const std::string key = what + " " + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
  if (const ConvPlanCache::TimedChoice* c = cache ? cache->timed_choice(key) : nullptr) {
    if (c->index < g.candidate_count()) {
      g.set_choice(g.candidate(c->index));
      return c->ms;
    }
  }
  float ms = -1.f;
  const int best = g.autotune(ctx, d, a, b, bias, &ms, launch_of(cache));
  if (cache) cache->set_timed_choice(key, {best, ms, g.candidate_count()});
  return ms;
}

// The fastest of `count` candidates, `run(i)` enqueueing candidate i once (GPU time: they launch
// alike), or the choice an identical layer made under `key` through the cache.
struct Timed {
  int index = 0;
  float ms = -1.f;
  bool shared = false;
};
Timed fastest(const Context& ctx, ConvPlanCache* cache, const std::string& key, int count,
              const std::function<void(int)>& run) {
  Timed t;
  if (const ConvPlanCache::TimedChoice* c = cache ? cache->timed_choice(key) : nullptr) {
    if (c->index < count) return {c->index, c->ms, true};
  }
  for (int i = 0; i < count; ++i) {
    const float ms = time_candidate(
        ctx.stream(),
        [&] {
          run(i);
          return true;
        },
        nullptr, launch_of(cache));
    if (ms >= 0.f && (t.ms < 0.f || ms < t.ms)) t = {i, ms, false};
  }
  if (t.ms >= 0.f && cache) cache->set_timed_choice(key, {t.index, t.ms, count});
  return t;
}

std::string fixed3(float ms) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << ms;
  return os.str();
}

}  // namespace

std::string e4m3_stream_refusal(const Context& ctx) {
  bool built = false;
  for (const CutlassGemmKernel* k : cutlass_built_kernels()) built = built || residual_stream_kernel(*k);
  if (!built || cutlass_built_conv_kernels().empty())
    return "this build has no CUTLASS residual-stream kernels (an sm_90 build with the CUTLASS headers: "
           "layers/cutlass/cutlass.cmake)";
  if (residual_stream_kernels(ctx.device()).empty() || cutlass_conv_kernels(ctx.device()).empty())
    return std::string("CUTLASS's sm_90a kernels do not run on this ") + ctx.props().name +
           (env::cutlass() ? "" : " (LAPTIME_CUTLASS=off)");
  return "";
}

struct E4m3Block::Plan {
  int Ho = 0, Wo = 0;              // conv2's output side (the plan's key holds N, H, W)
  const float* x_scale = nullptr;  // the producer's s_x this plan's GEMMs read
  std::unique_ptr<Gemm> conv1, downsample;
  const CutlassConvKernel* conv2 = nullptr;
  mutable CutlassLaunchCache conv2_launch;
  const CutlassGemmKernel* conv3 = nullptr;
  CutlassSchedule schedule;
  mutable CutlassLaunchCache conv3_launch;
  float conv1_ms = -1.f, conv2_ms = -1.f, downsample_ms = -1.f, conv3_ms = -1.f;
  int conv2_candidates = 0, conv3_candidates = 0;
  bool conv2_shared = false, conv3_shared = false;  // the choice came from an identical block through the cache
};

E4m3Block::E4m3Block(const Context& ctx, const std::string& block, const Conv2d& conv1, const Conv2d& conv2,
                     const Conv2d& conv3, const Conv2d* downsample)
    : block_(block),
      conv1_(conv1),
      conv2_(conv2),
      conv3_(conv3),
      downsample_(downsample),
      name1_(conv1.name()),
      name3_(conv3.name()),
      name_ds_(downsample ? downsample->name() : std::string()),
      name2_(conv2.name()) {
  for (const Conv2d* c : {&conv1, &conv3, downsample})
    if (c)
      require(c->shape().kernel == 1 && c->shape().pad == 0 && c->dtype() == DType::BF16,
              "internal: e4m3 block '" + block + "': '" + c->name() + "' is not a bf16 1x1 unpadded convolution.");
  require(conv1.shape().stride == 1 && conv3.shape().stride == 1,
          "internal: e4m3 block '" + block + "': conv1 and conv3 must have stride 1 (ResNet v1.5 strides conv2).");
  w1_.make(ctx, conv1.weight(), DType::BF16, conv1.shape().weight_count(), conv1.name());
  w2_.make(ctx, conv2.weight(), DType::BF16, conv2.shape().weight_count(), conv2.name());
  w3_.make(ctx, conv3.weight(), DType::BF16, conv3.shape().weight_count(), conv3.name());
  t1_scale_.make(ctx, "the output of " + conv1.name());
  t2_scale_.make(ctx, "the output of " + conv2.name());
  if (downsample) {
    wds_.make(ctx, downsample->weight(), DType::BF16, downsample->shape().weight_count(), downsample->name());
    sc_scale_.make(ctx, "the output of " + downsample->name());
  }
  y_scale_.make(ctx, "the output of " + block);
}

E4m3Block::~E4m3Block() = default;

std::size_t E4m3Block::extra_scratch_bytes(int N, int H, int W) const {
  if (!downsample_ || downsample_->shape().stride == 1) return 0;
  const ConvShape& d = downsample_->shape();
  return std::size_t(N) * d.out_size(H) * d.out_size(W) * d.in_channels;  // xs8
}

void E4m3Block::prepare(Context& ctx, int N, int H, int W, void* y8, const void* x8, const float* x_scale,
                        const Slots& s, ConvPlanCache* cache) {
  auto p = std::make_unique<Plan>();
  p->Ho = conv2_.shape().out_size(H);
  p->Wo = conv2_.shape().out_size(W);
  p->x_scale = x_scale;
  const int64_t rows = int64_t{N} * H * W, out_rows = int64_t{N} * p->Ho * p->Wo;
  auto fp8_gemm = [&](const Conv2d& c, int64_t m, const Fp8Weight& w, Epilogue e, const float* d_scale) {
    GemmSpec g;
    g.M = static_cast<int>(m);
    g.N = c.shape().out_channels;
    g.K = c.shape().in_channels;
    g.b_layout = BLayout::NK;  // a 1×1 convolution's KRSC weight is [out, in]
    g.ab_dtype = DType::F8E4M3;
    g.d_dtype = DType::F8E4M3;
    g.precision = Precision::FP8;
    g.epilogue = e;
    g.a_scale = x_scale;
    g.b_scale = w.weight_scale();
    g.d_scale = d_scale;
    g.fp8_fast_accum = env::fp8_fast_accum();
    try {
      return std::make_unique<Gemm>(ctx.cublaslt(), g, Context::kCublasLtWorkspace);
    } catch (const Error& err) {
      throw E4m3StreamError("fp8 ResNet-50's e4m3 stream: cuBLASLt has no fp8 GEMM for '" + c.name() + "' (" +
                            err.what() + "); LAPTIME_RESNET_FP8=layers keeps the blocks' activations bf16.");
    }
  };
  p->conv1 = fp8_gemm(conv1_, rows, w1_, Epilogue::BiasRelu, t1_scale_.inv_scale());
  p->conv1_ms = tune(ctx, *p->conv1, "e4m3 conv1", s.t1, x8, w1_.weight8(), conv1_.bias(), cache);
  if (downsample_) {
    p->downsample = fp8_gemm(*downsample_, out_rows, wds_, Epilogue::Bias, sc_scale_.inv_scale());
    const void* a8 = downsample_->shape().stride != 1 ? s.xs8 : x8;
    p->downsample_ms =
        tune(ctx, *p->downsample, "e4m3 downsample", s.sc8, a8, wds_.weight8(), downsample_->bias(), cache);
  }

  choose_conv2(ctx, *p, conv2_args(N, H, W, s), cache);
  choose_conv3(ctx, *p,
               conv3_args(N, p->Ho, p->Wo, y8, s, downsample_ ? s.sc8 : x8, downsample_ ? sc_scale_.scale() : x_scale),
               cache);
  plans_[{N, H, W}] = std::move(p);
}

// conv2: every fp8 convolution kernel that can run it timed on these buffers, the fastest kept.
void E4m3Block::choose_conv2(Context& ctx, Plan& p, const CutlassConvArgs& a2, ConvPlanCache* cache) const {
  std::vector<const CutlassConvKernel*> convs;
  std::string conv_refusals;
  for (const CutlassConvKernel* k : cutlass_conv_kernels(ctx.device())) {
    const std::string why = k->refusal(a2);
    if (why.empty() && k->workspace_bytes(a2) <= ctx.workspace_bytes())
      convs.push_back(k);
    else
      conv_refusals += (conv_refusals.empty() ? "" : "; ") + k->name() + ": " + (why.empty() ? "its workspace" : why);
  }
  if (convs.empty())
    throw E4m3StreamError("fp8 ResNet-50's e4m3 stream: no CUTLASS convolution can run '" + conv2_.name() + "'" +
                          (conv_refusals.empty() ? "" : " (" + conv_refusals + ")") +
                          "; LAPTIME_RESNET_FP8=layers keeps the blocks' activations bf16.");
  const std::string key2 = "e4m3 conv2 " + conv_shape_text(a2.N, a2.H, a2.W, a2.C) + " k" + std::to_string(a2.K) +
                           " s" + std::to_string(a2.stride);
  std::vector<CutlassLaunchCache> launches2(convs.size());  // one each: a cache is one kernel's
  const Timed t2 = fastest(ctx, cache, key2, static_cast<int>(convs.size()), [&](int i) {
    convs[i]->run(a2, launches2[i], ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
  });
  if (t2.ms < 0.f)
    throw E4m3StreamError("fp8 ResNet-50's e4m3 stream: every CUTLASS convolution failed to run '" + conv2_.name() +
                          "'.");
  p.conv2 = convs[t2.index];
  p.conv2_ms = t2.ms;
  p.conv2_shared = t2.shared;
  p.conv2_candidates = static_cast<int>(convs.size());
}

// conv3: every residual-stream kernel and schedule timed on these buffers, the fastest kept.
void E4m3Block::choose_conv3(Context& ctx, Plan& p, const CutlassGemmArgs& a, ConvPlanCache* cache) const {
  std::vector<std::pair<const CutlassGemmKernel*, CutlassSchedule>> candidates;
  std::string refusals;
  for (const CutlassGemmKernel* k : residual_stream_kernels(ctx.device())) {
    const std::string why = k->refusal(a);
    if (!why.empty()) {
      refusals += (refusals.empty() ? "" : "; ") + k->name() + ": " + why;
      continue;
    }
    for (const CutlassSchedule& sched : cutlass_schedules())
      if (k->workspace_bytes(a, sched) <= ctx.workspace_bytes()) candidates.push_back({k, sched});
  }
  if (candidates.empty())
    throw E4m3StreamError("fp8 ResNet-50's e4m3 stream: no CUTLASS kernel can run '" + conv3_.name() +
                          "' (M=" + std::to_string(a.M) + " N=" + std::to_string(a.N) + " K=" + std::to_string(a.K) +
                          ")" + (refusals.empty() ? "" : ": " + refusals) +
                          "; LAPTIME_RESNET_FP8=layers keeps the blocks' activations bf16.");
  const std::string key = "e4m3 conv3 " + std::to_string(a.M) + "x" + std::to_string(a.N) + "x" + std::to_string(a.K);
  std::vector<CutlassLaunchCache> launches3(candidates.size());
  const Timed t3 = fastest(ctx, cache, key, static_cast<int>(candidates.size()), [&](int i) {
    candidates[i].first->run(a, candidates[i].second, launches3[i], ctx.workspace(), ctx.workspace_bytes(),
                             ctx.stream());
  });
  if (t3.ms < 0.f)
    throw E4m3StreamError("fp8 ResNet-50's e4m3 stream: every CUTLASS kernel failed to run '" + conv3_.name() + "'.");
  p.conv3 = candidates[t3.index].first;
  p.schedule = candidates[t3.index].second;
  p.conv3_ms = t3.ms;
  p.conv3_shared = t3.shared;
  p.conv3_candidates = static_cast<int>(candidates.size());
}

const E4m3Block::Plan& E4m3Block::plan(int N, int H, int W) const {
  const auto it = plans_.find({N, H, W});
  if (it != plans_.end()) return *it->second;
  throw Error("internal: e4m3 block '" + block_ + "' was not prepared for an input of " +
              conv_shape_text(N, H, W, conv1_.shape().in_channels) + ".");
}

void E4m3Block::forward(const Context& ctx, void* y8, const void* x8, const float* x_scale, int N, int H, int W,
                        const Slots& s) const {
  const Plan& p = plan(N, H, W);
  if (x_scale != p.x_scale)  // conv1's and the downsample's plans hold the scale's address
    throw Error("internal: e4m3 block '" + block_ + "' runs with another input scale than it was prepared with.");
  {
    NvtxRange range(ctx, NvtxLevel::Layer, name1_);
    p.conv1->run(ctx, s.t1, x8, w1_.weight8(), conv1_.bias());
  }
  {
    NvtxRange range(ctx, NvtxLevel::Layer, name2_);
    p.conv2->run(conv2_args(N, H, W, s), p.conv2_launch, ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
  }
  const void* r8 = x8;
  const float* r_scale = x_scale;
  if (downsample_) {
    NvtxRange range(ctx, NvtxLevel::Layer, name_ds_);
    const ConvShape& d = downsample_->shape();
    const void* a = x8;
    if (d.stride != 1) {
      subsample_bytes(s.xs8, x8, N, H, W, d.in_channels, d.stride, ctx.stream());
      a = s.xs8;
    }
    p.downsample->run(ctx, s.sc8, a, wds_.weight8(), downsample_->bias());
    r8 = s.sc8;
    r_scale = sc_scale_.scale();
  }
  NvtxRange range(ctx, NvtxLevel::Layer, name3_);
  const CutlassGemmArgs a = conv3_args(N, p.Ho, p.Wo, y8, s, r8, r_scale);
  p.conv3->run(a, p.schedule, p.conv3_launch, ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
}

CutlassConvArgs E4m3Block::conv2_args(int N, int H, int W, const Slots& s) const {
  const ConvShape& k = conv2_.shape();
  CutlassConvArgs a;
  a.N = N;
  a.H = H;
  a.W = W;
  a.C = k.in_channels;
  a.K = k.out_channels;
  a.R = k.kernel;
  a.stride = k.stride;
  a.pad = k.pad;
  a.x = s.t1;
  a.w = w2_.weight8();
  a.y = s.t2;
  a.bias = conv2_.bias();
  a.a_scale = t1_scale_.scale();
  a.b_scale = w2_.weight_scale();
  a.d_scale = t2_scale_.inv_scale();
  return a;
}

CutlassGemmArgs E4m3Block::conv3_args(int N, int Ho, int Wo, void* y8, const Slots& s, const void* r8,
                                      const float* r_scale) const {
  CutlassGemmArgs a;
  a.M = N * Ho * Wo;
  a.N = conv3_.shape().out_channels;
  a.K = conv3_.shape().in_channels;
  a.a = s.t2;
  a.b = w3_.weight8();
  a.d = y8;
  a.c = r8;
  a.beta = 1.f;
  a.bias = conv3_.bias();
  a.a_scale = t2_scale_.scale();
  a.b_scale = w3_.weight_scale();
  a.c_scale = r_scale;
  a.d_scale = y_scale_.inv_scale();
  return a;
}

void E4m3Block::begin_calibration(const Context& ctx) {
  t1_scale_.begin_calibration(ctx);
  t2_scale_.begin_calibration(ctx);
  if (downsample_) sc_scale_.begin_calibration(ctx);
  y_scale_.begin_calibration(ctx);
  calibrating_ = true;
}

void E4m3Block::end_calibration(const Context& ctx) {
  if (!calibrating_) return;
  t1_scale_.end_calibration(ctx, kFp8ActivationMargin);
  t2_scale_.end_calibration(ctx, kFp8ActivationMargin);
  if (downsample_) sc_scale_.end_calibration(ctx, kFp8ActivationMargin);
  y_scale_.end_calibration(ctx, kFp8ActivationMargin);
  calibrating_ = false;
}

std::vector<std::string> E4m3Block::describe(int N, int H, int W) const {
  const Plan& p = plan(N, H, W);
  std::vector<std::string> v;
  v.push_back(conv1_.name() + ": e4m3 stream, fp8 GEMM (" + p.conv1->backend() + "), bias + ReLU -> e4m3, " +
              fixed3(p.conv1_ms) + " ms (fastest of " + std::to_string(p.conv1->candidate_count()) + ")");
  v.push_back(conv2_.name() + ": e4m3 stream, CUTLASS " + p.conv2->name() + ", " + fixed3(p.conv2_ms) +
              " ms (fastest of " + std::to_string(p.conv2_candidates) + (p.conv2_shared ? ", shared" : "") + ")");
  v.push_back(conv3_.name() + ": e4m3 stream, CUTLASS " + p.conv3->name() + ", " + schedule_name(p.schedule) + ", " +
              fixed3(p.conv3_ms) + " ms (fastest of " + std::to_string(p.conv3_candidates) +
              (p.conv3_shared ? ", shared" : "") + ")");
  if (downsample_)
    v.push_back(downsample_->name() + ": e4m3 stream, " +
                (downsample_->shape().stride != 1 ? "the e4m3 input subsampled, then " : std::string()) + "fp8 GEMM (" +
                p.downsample->backend() + "), bias -> e4m3, " + fixed3(p.downsample_ms) + " ms (fastest of " +
                std::to_string(p.downsample->candidate_count()) + ")");
  return v;
}

void E4m3Block::append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W) const {
  const Plan& p = plan(N, H, W);
  // Every tensor of the stream 1 byte, weights e4m3, the biases bf16.
  auto fp8_conv = [&](const Conv2d& c, int h, int w, bool residual) {
    LayerCost l = conv_cost(c.name(), parent, c.shape(), N, h, w, residual, DType::F8E4M3);
    l.weight_bytes = double(c.shape().weight_count()) + 2.0 * c.shape().out_channels;
    l.precision = "fp8";
    return l;
  };
  out.push_back(fp8_conv(conv1_, H, W, false));
  out.push_back(fp8_conv(conv2_, H, W, false));
  out.push_back(fp8_conv(conv3_, p.Ho, p.Wo, true));
  if (downsample_) out.push_back(fp8_conv(*downsample_, H, W, false));
}

}  // namespace laptime
