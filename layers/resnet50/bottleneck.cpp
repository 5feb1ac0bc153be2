#include "layers/resnet50/bottleneck.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/buffer.h"
#include "core/check.h"
#include "core/env_switches.h"
#include "core/timing.h"
#include "kernels/concat.cuh"

namespace laptime {

Bottleneck::Bottleneck(const DeviceWeights& w, const std::string& prefix, int in_channels, int width, int stride,
                       Precision precision)
    : name_(prefix),
      in_(in_channels),
      width_(width),
      dtype_(w.dtype()),
      conv1_(w, prefix + ".conv1", ConvShape{in_channels, width, 1, 1, 0}, ConvActivation::Relu, precision),
      conv2_(w, prefix + ".conv2", ConvShape{width, width, 3, stride, 1}, ConvActivation::Relu, precision),
      conv3_(w, prefix + ".conv3", ConvShape{width, kExpansion * width, 1, 1, 0}, ConvActivation::Relu, precision),
      shortcut_name_(prefix + ".downsample") {
  // torchvision's rule: project the shortcut whenever the block changes resolution or width.
  if (stride != 1 || in_channels != kExpansion * width)
    downsample_.emplace(w, prefix + ".downsample", ConvShape{in_channels, kExpansion * width, 1, stride, 0},
                        ConvActivation::None, precision);
}

const char* shortcut_way_name(ShortcutWay w) {
  switch (w) {
    case ShortcutWay::Apart:
      return "apart";
    case ShortcutWay::Folded:
      return "folded";
  }
  return "?";
}

std::vector<const Conv2d*> Bottleneck::convs() const {
  std::vector<const Conv2d*> v{&conv1_, &conv2_, &conv3_};
  if (downsample_) v.push_back(&*downsample_);
  return v;
}

void Bottleneck::begin_calibration(const Context& ctx) {
  for (Conv2d* c : {&conv1_, &conv2_, &conv3_}) c->begin_calibration(ctx);
  if (downsample_) downsample_->begin_calibration(ctx);
  if (e4m3_) e4m3_->begin_calibration(ctx);
}

void Bottleneck::end_calibration(const Context& ctx) {
  for (Conv2d* c : {&conv1_, &conv2_, &conv3_}) c->end_calibration(ctx);
  if (downsample_) downsample_->end_calibration(ctx);
  if (e4m3_) e4m3_->end_calibration(ctx);
}

void Bottleneck::use_e4m3_stream(const Context& ctx) {
  for (Conv2d* c : {&conv1_, &conv2_, &conv3_}) c->set_fp8_candidate(false);
  if (downsample_) downsample_->set_fp8_candidate(false);
  e4m3_ = std::make_unique<E4m3Block>(ctx, name_.str(), conv1_, conv2_, conv3_, downsample_ ? &*downsample_ : nullptr);
}

void Bottleneck::offer_folded_shortcut(const DeviceWeights& w, Precision precision) {
  require(downsample_.has_value(), "internal: block '" + name_.str() + "' has no downsample to fold into conv3.");
  require(precision != Precision::FP8 && !e4m3_,
          "internal: block '" + name_.str() + "' folds its shortcut only outside fp8.");
  conv3_folded_.emplace(w, name_.str() + ".conv3", ConvShape{width_ + in_, kExpansion * width_, 1, 1, 0},
                        ConvActivation::Relu, precision);
}

void add_folded_shortcut_weights(HostWeights& out, const HostWeights& w, const std::string& prefix, int in_channels,
                                 int width) {
  const int n_out = Bottleneck::kExpansion * width, k = width + in_channels;
  auto values = [&](const std::string& name, std::size_t n) -> const std::vector<float>& {
    const std::vector<float>& v = w.at(name).values;
    require(v.size() == n, "internal: '" + name + "' has " + std::to_string(v.size()) + " values, not " +
                               std::to_string(n) + ", for the folded shortcut.");
    return v;
  };
  const std::vector<float>& w3 = values(prefix + ".conv3.weight", std::size_t(n_out) * width);
  const std::vector<float>& wd = values(prefix + ".downsample.weight", std::size_t(n_out) * in_channels);
  const std::vector<float>& b3 = values(prefix + ".conv3.bias", n_out);
  const std::vector<float>& bd = values(prefix + ".downsample.bias", n_out);
  std::vector<float> cat(std::size_t(n_out) * k), bias(n_out);
  for (int o = 0; o < n_out; ++o) {
    std::copy_n(w3.begin() + std::size_t(o) * width, width, cat.begin() + std::size_t(o) * k);
    std::copy_n(wd.begin() + std::size_t(o) * in_channels, in_channels, cat.begin() + std::size_t(o) * k + width);
    bias[o] = b3[o] + bd[o];
  }
  out.add(prefix + ".conv3.weight", {n_out, 1, 1, k}, std::move(cat));
  out.add(prefix + ".conv3.bias", {n_out}, std::move(bias));
}

void Bottleneck::choose_shortcut(int N, int H, int W, ShortcutWay way) {
  const auto it = shortcut_.find({N, H, W});
  require(it != shortcut_.end(),
          "internal: block '" + name_.str() + "' has no folded shortcut prepared at this shape.");
  it->second.way = way;
  it->second.note = "chosen by a test";
}

ShortcutWay Bottleneck::shortcut_way(int N, int H, int W) const {
  const auto it = shortcut_.find({N, H, W});
  return it == shortcut_.end() ? ShortcutWay::Apart : it->second.way;
}

bool Bottleneck::has_shortcut_way(int N, int H, int W, ShortcutWay way) const {
  const auto it = shortcut_.find({N, H, W});
  return it != shortcut_.end() || way == ShortcutWay::Apart;
}

std::string Bottleneck::describe_shortcut(int N, int H, int W) const {
  const auto it = shortcut_.find({N, H, W});
  if (it == shortcut_.end()) return "";
  const ShortcutChoice& c = it->second;
  const int Ho = out_size(H), Wo = out_size(W);
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  os << shortcut_way_name(c.way) << " (folded: one convolution over K = " << width_ << " + " << in_
     << ", t2 and x copied side by side)";
  const char* sep = ": ";
  for (ShortcutWay w : {ShortcutWay::Folded, ShortcutWay::Apart}) {
    const float ms = c.ms[static_cast<int>(w)];
    if (ms < 0.f) continue;
    os << sep << shortcut_way_name(w) << " " << ms << " ms";
    sep = ", ";
  }
  if (*sep == ',') os << ", conv2 to conv3";
  if (!c.note.empty()) os << " [" << c.note << "]";
  if (c.way != ShortcutWay::Apart)
    os << "; conv3 over both: " << conv3_folded_->describe(N, Ho, Wo);
  else
    os << "; " << downsample_->describe(N, H, W);
  return os.str();
}

void Bottleneck::drop_e4m3_stream() {
  e4m3_.reset();
  for (Conv2d* c : {&conv1_, &conv2_, &conv3_}) c->set_fp8_candidate(true);
  if (downsample_) downsample_->set_fp8_candidate(true);
}

namespace {
// Byte offsets of a block's scratch tensors, and the total.
struct ScratchPlan {
  std::size_t t1, t2, shortcut, bytes;
};

// `folded_channels`: the folded shortcut's copy [out_px, width + in] shares the shortcut's slot
// (0 without the offer).
ScratchPlan plan_scratch(std::size_t in_px, std::size_t out_px, int width, int out_channels, bool downsample,
                         int folded_channels, std::size_t es) {
  ArenaLayout l;
  ScratchPlan p{};
  p.t1 = l.reserve(in_px * width * es);
  p.t2 = l.reserve(out_px * width * es);
  p.shortcut = l.reserve(downsample ? out_px * std::max(out_channels, folded_channels) * es : 0);
  p.bytes = l.bytes();
  return p;
}
}  // namespace

Bottleneck::Slots Bottleneck::slots(void* scratch, int N, int H, int W) const {
  const ScratchPlan p = plan_scratch(std::size_t(N) * H * W, std::size_t(N) * out_size(H) * out_size(W), width_,
                                     out_channels(), has_downsample(), folded_channels(), dtype_size(dtype_));
  char* base = static_cast<char*>(scratch);
  return Slots{base + p.t1, base + p.t2, base + p.shortcut, base + p.bytes};
}

std::size_t Bottleneck::scratch_bytes(int N, int H, int W) const {
  return plan_scratch(std::size_t(N) * H * W, std::size_t(N) * out_size(H) * out_size(W), width_, out_channels(),
                      has_downsample(), folded_channels(), dtype_size(dtype_))
             .bytes +
         (e4m3_ ? e4m3_->extra_scratch_bytes(N, H, W) : 0);  // after the bf16 slots (Slots::rest)
}

void Bottleneck::prepare(Context& ctx, int N, int H, int W, void* y, const void* x, void* scratch, ConvRoute route,
                         ConvPlanCache* cache, const float* x_scale) {
  const Slots s = slots(scratch, N, H, W);
  const int Ho = out_size(H), Wo = out_size(W);
  // A route a convolution's shape does not allow (Gemm on a 3×3) is asked of those it fits only.
  auto fit = [&](const Conv2d& c) {
    const ConvShape& k = c.shape();
    return route == ConvRoute::Gemm && !(k.kernel == 1 && k.stride == 1 && k.pad == 0) ? ConvRoute::Auto : route;
  };
  conv1_.prepare(ctx, N, H, W, s.t1, x, nullptr, fit(conv1_), cache);
  conv2_.prepare(ctx, N, H, W, s.t2, s.t1, nullptr, fit(conv2_), cache);
  if (downsample_) downsample_->prepare(ctx, N, H, W, s.shortcut, x, nullptr, fit(*downsample_), cache);
  conv3_.prepare(ctx, N, Ho, Wo, y, s.t2, downsample_ ? s.shortcut : x, fit(conv3_), cache);
  if (conv3_folded_) prepare_shortcut(ctx, N, H, W, y, x, s, fit(*conv3_folded_), cache);
  if (e4m3_) {
    require(x_scale != nullptr,
            "internal: block '" + name_.str() + "' on the e4m3 stream was prepared without its input's scale.");
    e4m3_->prepare(ctx, N, H, W, y, x, x_scale, E4m3Block::Slots{s.t1, s.t2, s.shortcut, s.rest}, cache);
  }
}

void Bottleneck::prepare_shortcut(Context& ctx, int N, int H, int W, void* y, const void* x, const Slots& s,
                                  ConvRoute conv3_route, ConvPlanCache* cache) {
  const int Ho = out_size(H), Wo = out_size(W);
  ShortcutChoice c;
  // The copy writes the shortcut's slot, which the apart way's downsample writes too: the ways are
  // never enqueued together.
  enqueue_concat(ctx, s, x, N, H, W);
  conv3_folded_->prepare(ctx, N, Ho, Wo, y, s.shortcut, nullptr, conv3_route, cache);
  const ResnetShortcut mode = env::resnet_shortcut();
  auto note = [&](const std::string& n) { c.note += (c.note.empty() ? "" : "; ") + n; };
  if (mode == ResnetShortcut::Auto) {
    const CandidateLaunch launch = GemmTuner::launch_for(cache ? cache->replay() : GemmTuner::Replay::Graph);
    std::string why;
    float best = -1.f;
    for (ShortcutWay w : {ShortcutWay::Apart, ShortcutWay::Folded}) {
      const float ms = time_candidate(
          ctx.stream(),
          [&] {
            enqueue_conv2_onward(ctx, y, x, s, N, H, W, w);
            return true;
          },
          &why, launch);
      c.ms[static_cast<int>(w)] = ms;
      if (ms < 0.f) note(std::string(shortcut_way_name(w)) + " refused: " + why);
      if (ms >= 0.f && (best < 0.f || ms < best)) {
        best = ms;
        c.way = w;
      }
    }
  } else {
    c.way = mode == ResnetShortcut::Apart ? ShortcutWay::Apart : ShortcutWay::Folded;
    note(std::string(env::kResnetShortcut.name) + "=" + env::text(env::kResnetShortcut));
  }
  shortcut_[{N, H, W}] = c;
}

void Bottleneck::enqueue_concat(const Context& ctx, const Slots& s, const void* x, int N, int H, int W) const {
  NvtxRange range(ctx, NvtxLevel::Layer, shortcut_name_);
  concat_shortcut_forward(dtype_, s.shortcut, s.t2, width_, x, in_, N, H, W, downsample_->shape().stride, ctx.stream());
}

void Bottleneck::enqueue_conv2_onward(const Context& ctx, void* y, const void* x, const Slots& s, int N, int H, int W,
                                      ShortcutWay way) const {
  const int Ho = out_size(H), Wo = out_size(W);
  switch (way) {
    case ShortcutWay::Folded:  // t2 and x strided copied side by side, one convolution over both
      conv2_.forward(ctx, s.t2, s.t1, N, H, W);
      enqueue_concat(ctx, s, x, N, H, W);
      conv3_folded_->forward(ctx, y, s.shortcut, N, Ho, Wo);
      return;
    case ShortcutWay::Apart:
      conv2_.forward(ctx, s.t2, s.t1, N, H, W);
      if (downsample_) downsample_->forward(ctx, s.shortcut, x, N, H, W);
      conv3_.forward(ctx, y, s.t2, N, Ho, Wo, downsample_ ? s.shortcut : x);
      return;
  }
}

void Bottleneck::append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W) const {
  out.push_back(composite_cost(name_.str(), parent));
  if (e4m3_) {
    e4m3_->append_costs(out, name_.str(), N, H, W);
    return;
  }
  out.push_back(conv1_.cost(name_.str(), N, H, W));
  out.push_back(conv2_.cost(name_.str(), N, H, W));
  if (shortcut_way(N, H, W) ==
      ShortcutWay::Folded) {  // conv3 over [t2 ; x strided], no residual; the copy in the downsample's range
    const int Ho = out_size(H), Wo = out_size(W);
    out.push_back(conv3_folded_->cost(name_.str(), N, Ho, Wo));
    const double px = double(N) * Ho * Wo, copied = px * (width_ + in_);
    out.push_back(
        streaming_cost(shortcut_name_.str(), name_.str(), "elementwise", copied, copied, 0, dtype_size(dtype_)));
    return;
  }
  out.push_back(conv3_.cost(name_.str(), N, out_size(H), out_size(W)));  // with the shortcut it adds
  if (downsample_) out.push_back(downsample_->cost(name_.str(), N, H, W));
}

void Bottleneck::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, void* scratch) const {
  NvtxRange range(ctx, NvtxLevel::Block, name_);
  const Slots s = slots(scratch, N, H, W);
  const int Ho = out_size(H), Wo = out_size(W);
  conv1_.forward(ctx, s.t1, x, N, H, W);
  enqueue_conv2_onward(ctx, y, x, s, N, H, W, shortcut_way(N, H, W));
  if (e4m3_ && e4m3_->calibrating()) {  // the stream's scales, from this bf16 pass (fp8: never folded, t2 packed)
    e4m3_->record_t1(ctx, s.t1, int64_t{N} * H * W * width_);
    e4m3_->record_t2(ctx, s.t2, int64_t{N} * Ho * Wo * width_);
    const int64_t out_elems = int64_t{N} * Ho * Wo * out_channels();
    if (downsample_) e4m3_->record_shortcut(ctx, s.shortcut, out_elems);
    e4m3_->record_output(ctx, y, out_elems);
  }
}

void Bottleneck::forward_e4m3(const Context& ctx, void* y8, const void* x8, const float* x_scale, int N, int H, int W,
                              void* scratch) const {
  if (!e4m3_) throw Error("internal: block '" + name_.str() + "' is not on the e4m3 stream.");
  NvtxRange range(ctx, NvtxLevel::Block, name_);
  const Slots s = slots(scratch, N, H, W);
  e4m3_->forward(ctx, y8, x8, x_scale, N, H, W, E4m3Block::Slots{s.t1, s.t2, s.shortcut, s.rest});
}

}  // namespace laptime
