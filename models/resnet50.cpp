#include "models/resnet50.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "core/check.h"
#include "core/env_switches.h"
#include "core/tensor.h"
#include "kernels/convert.cuh"
#include "kernels/fp8.cuh"
#include "kernels/image.cuh"
#include "kernels/stem.cuh"

namespace laptime {
namespace {

constexpr int kImageChannels = 3;
constexpr ConvShape kStemShape{kImageChannels, 0, 7, 2, 3};  // out_channels = base_width
// cuDNN's 4-d descriptors take int dimensions, and its kernels index an activation with
// 32-bit offsets: no tensor may reach 2^31 elements.
constexpr int64_t kMaxTensorElements = (int64_t{1} << 31) - 1;

ConvShape stem_shape(const ResNetConfig& cfg) {
  ConvShape s = kStemShape;
  s.out_channels = cfg.base_width;
  return s;
}

// One bottleneck's place in the network.
struct BlockGeometry {
  std::string prefix;  // layer<s>.<b>
  int in_channels, width, stride, in_size, out_size;
};

// The network's shape at input side S: stem and pool output sides, and every block.
struct Geometry {
  int stem_out = 0, pool_out = 0;
  std::vector<BlockGeometry> blocks;
};

Geometry geometry(const ResNetConfig& cfg, int S) {
  Geometry g;
  g.stem_out = stem_shape(cfg).out_size(S);
  g.pool_out = MaxPool::out_size(g.stem_out);
  int in_channels = cfg.base_width, size = g.pool_out;
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < cfg.layers[s]; ++b) {
      const int width = cfg.stage_width(s), stride = (s > 0 && b == 0) ? 2 : 1;
      const int out = ConvShape{width, width, 3, stride, 1}.out_size(size);
      g.blocks.push_back(
          {"layer" + std::to_string(s + 1) + "." + std::to_string(b), in_channels, width, stride, size, out});
      in_channels = Bottleneck::kExpansion * width;
      size = out;
    }
  return g;
}

// The largest activation of a forward pass at (B, S), in elements: the ping-pong slots' size.
int64_t largest_activation(const ResNetConfig& cfg, const Geometry& g, int B) {
  auto px = [&](int side) { return int64_t{B} * side * side; };
  int64_t m = std::max(px(g.stem_out), px(g.pool_out)) * cfg.base_width;
  for (const BlockGeometry& b : g.blocks) {
    m = std::max(m, px(b.in_size) * b.width);  // t1, the widest inner tensor
    m = std::max(m, px(b.out_size) * Bottleneck::kExpansion * b.width);
  }
  return m;
}

std::vector<int> parse_layers(const std::string& text, const std::string& source) {
  std::vector<int> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    require(!item.empty() && *end == '\0' && n > 0 && n < 1000,
            source + ": metadata resnet.layers = '" + text + "' is not four positive block counts.");
    v.push_back(static_cast<int>(n));
  }
  require(v.size() == 4, source + ": metadata resnet.layers = '" + text + "' is not four positive block counts.");
  return v;
}

}  // namespace

void ResNetConfig::validate() const {
  for (int s = 0; s < 4; ++s)
    require(layers[s] > 0, "ResNet config: stage " + std::to_string(s + 1) + " must have at least one block, got " +
                               std::to_string(layers[s]) + ".");
  require(base_width > 0 && base_width <= 4096,
          "ResNet config: base_width must be in [1, 4096], got " + std::to_string(base_width) + ".");
  require(num_classes > 0, "ResNet config: num_classes must be positive, got " + std::to_string(num_classes) + ".");
  require(image_size >= kMinImageSize, "ResNet config: image_size must be at least " + std::to_string(kMinImageSize) +
                                           ", got " + std::to_string(image_size) + ".");
  require(bn_eps > 0.f && std::isfinite(bn_eps), "ResNet config: bn_eps must be a positive number.");
}

ResNetConfig ResNetConfig::from_file(const SafeTensors& file) {
  const std::string model = file.meta("laptime.model");
  require(model == "resnet50", file.source() + " holds a '" + model + "' model, not resnet50.");
  auto as_int = [&](const char* key) {
    const int64_t v = file.meta_int(key);
    require(v > 0 && v < (int64_t{1} << 31),
            file.source() + ": metadata " + key + " = " + std::to_string(v) + " is out of range.");
    return static_cast<int>(v);
  };
  ResNetConfig c;
  const std::vector<int> layers = parse_layers(file.meta("resnet.layers"), file.source());
  std::copy(layers.begin(), layers.end(), c.layers.begin());
  c.base_width = as_int("resnet.base_width");
  c.num_classes = as_int("resnet.num_classes");
  c.image_size = as_int("resnet.image_size");
  if (file.metadata().count("resnet.bn_eps")) c.bn_eps = static_cast<float>(file.meta_double("resnet.bn_eps"));
  c.validate();
  return c;
}

void check_resnet50_input(const ResNetConfig& cfg, int batch, int image_size) {
  cfg.validate();
  require(batch >= 1, "batch size must be at least 1, got " + std::to_string(batch) + ".");
  require(image_size >= kMinImageSize, "image size " + std::to_string(image_size) +
                                           " is too small: ResNet-50 halves the resolution five times, so it needs "
                                           "at least " +
                                           std::to_string(kMinImageSize) + "x" + std::to_string(kMinImageSize) +
                                           " pixels.");
  // Checked in double first: the geometry itself would overflow int for absurd sizes.
  const double rough = double(batch) * image_size * image_size / 4 * cfg.base_width;
  // The stem's input counts too: with a narrow stem (base_width < 16) it outgrows the stem's output.
  const SpaceToDepthStem s2d = space_to_depth_stem(stem_shape(cfg), DType::BF16);  // the most channels
  const int64_t side = s2d.side(image_size);
  const int64_t largest = rough < 1e15 ? std::max(largest_activation(cfg, geometry(cfg, image_size), batch),
                                                  int64_t{batch} * side * side * s2d.stored_channels)
                                       : INT64_MAX;
  require(largest <= kMaxTensorElements,
          "batch " + std::to_string(batch) + " at " + std::to_string(image_size) + "x" + std::to_string(image_size) +
              " needs an activation of " + std::to_string(largest) +
              " elements, more than the 2^31 cuDNN addresses; use a smaller batch or image.");
}

std::vector<ResNetConv> resnet50_convs(const ResNetConfig& cfg) {
  std::vector<ResNetConv> v{{"conv1", "conv1.weight", "bn1", stem_shape(cfg)}};
  for (const BlockGeometry& b : geometry(cfg, cfg.image_size).blocks) {
    const std::string& p = b.prefix;
    const int out = Bottleneck::kExpansion * b.width;
    v.push_back({p + ".conv1", p + ".conv1.weight", p + ".bn1", {b.in_channels, b.width, 1, 1, 0}});
    v.push_back({p + ".conv2", p + ".conv2.weight", p + ".bn2", {b.width, b.width, 3, b.stride, 1}});
    v.push_back({p + ".conv3", p + ".conv3.weight", p + ".bn3", {b.width, out, 1, 1, 0}});
    if (b.stride != 1 || b.in_channels != out)  // Bottleneck's rule for a projection shortcut
      v.push_back(
          {p + ".downsample", p + ".downsample.0.weight", p + ".downsample.1", {b.in_channels, out, 1, b.stride, 0}});
  }
  return v;
}

namespace {
const char* const kBnStats[] = {"weight", "bias", "running_mean", "running_var"};
std::vector<int64_t> oihw(const ConvShape& s) { return {s.out_channels, s.in_channels, s.kernel, s.kernel}; }
}  // namespace

HostWeights read_resnet50_params(const SafeTensors& file, const ResNetConfig& cfg) {
  cfg.validate();
  HostWeights w;
  for (const ResNetConv& c : resnet50_convs(cfg)) {
    w.add_from(file, c.weight, oihw(c.shape));
    for (const char* stat : kBnStats) w.add_from(file, c.bn + "." + stat, {c.shape.out_channels});
  }
  w.add_from(file, "fc.weight", {cfg.num_classes, cfg.features()});
  w.add_from(file, "fc.bias", {cfg.num_classes});
  return w;
}

HostWeights random_resnet50_params(const ResNetConfig& cfg, uint64_t seed) {
  cfg.validate();
  WeightRng rng(seed);
  HostWeights w;
  for (const ResNetConv& c : resnet50_convs(cfg)) {
    const ConvShape& s = c.shape;
    const int64_t K = s.out_channels;
    w.add(c.weight, oihw(s), rng.normal(s.weight_count(), 0.f, std::sqrt(2.f / (K * s.kernel * s.kernel))));
    w.add(c.bn + ".weight", {K}, rng.uniform(K, 0.5f, 1.5f));
    w.add(c.bn + ".bias", {K}, rng.normal(K, 0.f, 0.1f));
    w.add(c.bn + ".running_mean", {K}, rng.normal(K, 0.f, 0.1f));
    w.add(c.bn + ".running_var", {K}, rng.uniform(K, 0.5f, 1.5f));
  }
  const float bound = 1.f / std::sqrt(static_cast<float>(cfg.features()));
  w.add("fc.weight", {cfg.num_classes, cfg.features()},
        rng.uniform(int64_t{cfg.num_classes} * cfg.features(), -bound, bound));
  w.add("fc.bias", {cfg.num_classes}, rng.uniform(cfg.num_classes, -bound, bound));
  return w;
}

HostWeights fold_resnet50_params(const HostWeights& params, const ResNetConfig& cfg) {
  HostWeights w;
  for (const ResNetConv& c : resnet50_convs(cfg)) {
    const ConvShape& s = c.shape;
    auto stat = [&](const char* name) -> const std::vector<float>& { return params.at(c.bn + "." + name).values; };
    FoldedConv f = fold_batchnorm(s, params.at(c.weight).values, stat("weight"), stat("bias"), stat("running_mean"),
                                  stat("running_var"), cfg.bn_eps, c.bn);
    w.add(c.name + ".weight", {s.out_channels, s.kernel, s.kernel, s.in_channels}, std::move(f.weight));
    w.add(c.name + ".bias", {s.out_channels}, std::move(f.bias));
  }
  for (const char* name : {"fc.weight", "fc.bias"}) w.add(name, params.at(name).shape, params.at(name).values);
  return w;
}

HostWeights load_resnet50_weights(const SafeTensors& file, const ResNetConfig& cfg) {
  return fold_resnet50_params(read_resnet50_params(file, cfg), cfg);
}

HostWeights random_resnet50_weights(const ResNetConfig& cfg, uint64_t seed) {
  return fold_resnet50_params(random_resnet50_params(cfg, seed), cfg);
}

namespace {
// Host-only checks before any device work (the constructor's first member initializer): the
// shapes, and every folded tensor the config needs with its exact shape — the device keeps
// bare pointers, so a weight of another config must be caught here, not read out of bounds.
const ResNetConfig& checked(const ResNetConfig& cfg, const HostWeights& w, const Context& ctx, Precision precision,
                            int max_batch, int image_size) {
  if (precision == Precision::FP8) {
    const std::string why = fp8_refusal(ctx);
    require(why.empty(), why);
  }
  check_resnet50_input(cfg, max_batch, image_size);
  auto expect = [&](const std::string& name, const std::vector<int64_t>& shape) {
    const HostTensor& t = w.at(name);
    require(t.shape == shape, "weight '" + name + "' has shape " + shape_str(t.shape) + ", but this ResNet needs " +
                                  shape_str(shape) + ".");
  };
  for (const ResNetConv& c : resnet50_convs(cfg)) {
    const ConvShape& s = c.shape;
    expect(c.name + ".weight", {s.out_channels, s.kernel, s.kernel, s.in_channels});
    expect(c.name + ".bias", {s.out_channels});
  }
  expect("fc.weight", {cfg.num_classes, cfg.features()});
  expect("fc.bias", {cfg.num_classes});
  return cfg;
}

// conv1's weight rewritten for the space-to-depth input, and its bias.
HostWeights stem_host_weights(const HostWeights& w, const ResNetConfig& cfg, const SpaceToDepthStem& s2d) {
  HostWeights h;
  const int K = cfg.base_width, k = s2d.s2d_kernel();
  h.add("conv1.weight", {K, k, k, s2d.stored_channels}, space_to_depth_weight(s2d, w.at("conv1.weight").values, K));
  h.add("conv1.bias", {K}, w.at("conv1.bias").values);
  return h;
}
}  // namespace

namespace {
// The stem that runs for `asked`, and in *why the reason Fused was refused ("" when it was not).
StemKind resolve_stem(StemKind asked, const Context& ctx, DType dtype, const SpaceToDepthStem& s2d, int width,
                      int image_size, std::string* why) {
  why->clear();
  if (asked == StemKind::Cudnn) return StemKind::Cudnn;
  // Auto: the fused kernel wherever it runs, measured faster on the H200 at every batch size
  // (docs/history/baselines.md, run 2: the fused stem); silently cuDNN where it cannot (fp32, tf32, other widths).
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device()));
  const std::string refusal =
      fused_stem_refusal(dtype, s2d.stored_channels, s2d.s2d_kernel(), width, s2d.side(image_size), optin);
  if (asked == StemKind::Fused) *why = refusal;
  return refusal.empty() ? StemKind::Fused : StemKind::Cudnn;
}
}  // namespace

ResNet50::ResNet50(Context& ctx, const ResNetConfig& cfg, const HostWeights& weights, Precision precision,
                   int max_batch, int image_size, StemKind stem)
    : cfg_(checked(cfg, weights, ctx, precision, max_batch, image_size)),
      precision_(precision),
      max_batch_(max_batch),
      image_size_(image_size),
      weights_(ctx, weights, activation_dtype(precision)),
      stem_shape_(stem_shape(cfg)),
      s2d_(space_to_depth_stem(stem_shape_, activation_dtype(precision))),
      stem_weights_(ctx, stem_host_weights(weights, cfg, s2d_), activation_dtype(precision)),
      stem_(stem_weights_, "conv1", s2d_.conv(cfg.base_width), ConvActivation::Relu, precision),
      maxpool_("maxpool", activation_dtype(precision), cfg.kernels),
      stem_kind_(
          resolve_stem(stem, ctx, activation_dtype(precision), s2d_, cfg.base_width, image_size, &stem_refusal_)),
      fused_(stem_kind_ == StemKind::Fused
                 ? std::make_unique<FusedStem>(stem_weights_, "conv1", cfg.base_width,
                                               cfg.kernels.count("stem") ? cfg.kernels.at("stem") : -1)
                 : nullptr),
      head_(weights_, cfg.features(), cfg.num_classes, precision, cfg.kernels) {
  require(
      !(fused_ && cfg.kernels.count("maxpool")),
      "--kernel maxpool runs in the max pool layer, which the fused stem replaces (bf16's default): add --stem cudnn.");
  require(fused_ || !cfg.kernels.count("stem"), "--kernel stem runs in the fused stem, which does not run here (" +
                                                    stem_variant() +
                                                    "): leave out --stem cudnn (the fused stem runs in bf16).");
  const Geometry g = geometry(cfg, image_size);
  for (const BlockGeometry& b : g.blocks)
    blocks_.emplace_back(weights_, b.prefix, b.in_channels, b.width, b.stride, precision);
  if (precision != Precision::FP8) {  // the folded shortcut offered to every block with a downsample
    HostWeights folded;
    for (std::size_t i = 0; i < blocks_.size(); ++i)
      if (blocks_[i].has_downsample())
        add_folded_shortcut_weights(folded, weights, g.blocks[i].prefix, g.blocks[i].in_channels, g.blocks[i].width);
    shortcut_weights_ = DeviceWeights(ctx, folded, activation_dtype(precision));
    for (Bottleneck& b : blocks_)
      if (b.has_downsample()) b.offer_folded_shortcut(shortcut_weights_, precision);
  }
  if (precision == Precision::FP8) {  // the e4m3 stream (layers/resnet50/e4m3_block.h), blocks_ now whole
    const ResnetFp8 mode = env::resnet_fp8();
    const std::string why = laptime::e4m3_stream_refusal(ctx);
    require(mode != ResnetFp8::Stream || why.empty(),
            "LAPTIME_RESNET_FP8=stream needs CUTLASS's residual-stream kernels, and " + why +
                "; LAPTIME_RESNET_FP8=layers (or auto) keeps the blocks' activations bf16.");
    e4m3_stream_ = mode != ResnetFp8::Layers && why.empty();
    if (mode == ResnetFp8::Auto) e4m3_stream_why_ = why;
    if (e4m3_stream_) {
      for (Bottleneck& b : blocks_) b.use_e4m3_stream(ctx);
      stem_scale_.make(ctx, "the stem's output");
    }
  }

  const std::size_t es = dtype_size(dtype());
  const std::size_t B = max_batch, S = image_size;
  std::size_t scratch = 0;
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    scratch = std::max(scratch, blocks_[i].scratch_bytes(max_batch, g.blocks[i].in_size, g.blocks[i].in_size));
  ArenaLayout l;
  const std::size_t staging_off = l.reserve(B * kImageChannels * S * S * sizeof(float));
  const std::size_t side = s2d_.side(image_size);
  const std::size_t input_off = l.reserve(B * side * side * s2d_.stored_channels * es);
  const std::size_t act_bytes = static_cast<std::size_t>(largest_activation(cfg, g, max_batch)) * es;
  const std::size_t act0_off = l.reserve(act_bytes), act1_off = l.reserve(act_bytes);
  const std::size_t scratch_off = l.reserve(scratch);
  const std::size_t pooled_off = l.reserve(B * cfg.features() * es);
  const std::size_t logits_off = l.reserve(B * cfg.num_classes * es);
  arena_ = DeviceBuffer(l.bytes());
  staging_ = arena_.as<float>(staging_off);
  input_ = arena_.as<char>(input_off);
  act_[0] = arena_.as<char>(act0_off);
  act_[1] = arena_.as<char>(act1_off);
  scratch_ = arena_.as<char>(scratch_off);
  pooled_ = arena_.as<char>(pooled_off);
  logits_ = arena_.as<char>(logits_off);
  // Zeros rather than leftovers: prepare() runs each convolution on these buffers.
  CUDA_CHECK(cudaMemsetAsync(arena_.data(), 0, arena_.bytes(), ctx.stream()));
  if (cfg.eager_loop) plan_cache_.set_replay(GemmTuner::Replay::Eager);
  try {
    prepare(ctx, max_batch);
  } catch (const E4m3StreamError& e) {
    // A library without a plan for one of the stream's GEMMs at this batch: auto keeps the bf16
    // stream (the per-layer fp8 choices) and says why; stream, asked for, stops here.
    if (env::resnet_fp8() != ResnetFp8::Auto) throw;
    for (Bottleneck& b : blocks_) b.drop_e4m3_stream();
    e4m3_stream_ = false;
    e4m3_stream_why_ = e.what();
    prepare(ctx, max_batch);
  }
  // Everything above ran on ctx.stream(), the weights' upload (DeviceWeights) included.
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void ResNet50::check_batch(int B) const {
  require(B >= 1 && B <= max_batch_, "batch size " + std::to_string(B) + " is outside [1, " +
                                         std::to_string(max_batch_) + "] this model was built for.");
}

// The buffers here are the ones forward() will use, in the same order: every convolution
// is planned (and tried) exactly as it will run.
void ResNet50::prepare(Context& ctx, int B) {
  check_batch(B);
  const int S = image_size_, Hs = s2d_.side(S);
  const int s1 = stem_shape_.out_size(S), s2 = MaxPool::out_size(s1);
  // Progress on stderr: a tuned build takes seconds (one line per stage; \r on a terminal).
  const bool tty = isatty(fileno(stderr));
  const auto t0 = std::chrono::steady_clock::now();
  const double spent0 = plan_cache_.seconds();
  auto progress = [&](const std::string& what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%sresnet50: planning convolutions for batch %d: %s (%.1f s)%s", tty ? "\r" : "", B,
                 what.c_str(), s, tty ? "\x1b[K" : "\n");
    std::fflush(stderr);
  };
  progress("conv1");
  if (fused_)
    fused_->prepare(ctx, B, Hs);
  else
    stem_.prepare(ctx, B, Hs, Hs, act_[0], input_, nullptr, ConvRoute::Auto, &plan_cache_);
  int cur = 1, size = s2;  // the max pool writes act_[1]
  std::string stage;
  const float* x_scale = e4m3_stream_ ? stem_scale_.scale() : nullptr;  // the e4m3 stream's input scale
  for (Bottleneck& b : blocks_) {
    const std::string name = b.convs()[0]->name();
    const std::string st = name.substr(0, name.find('.'));
    if (st != stage) progress(stage = st);
    b.prepare(ctx, B, size, size, act_[1 - cur], act_[cur], scratch_, ConvRoute::Auto, &plan_cache_, x_scale);
    if (e4m3_stream_) x_scale = b.e4m3().output_scale().scale();
    size = b.out_size(size);
    cur = 1 - cur;
  }
  head_.prepare(ctx, B);
  prepared_.insert(B);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "%sresnet50: batch %d planned in %.1f s (convolutions %.1f s; %d distinct plans so far, %d shared, "
               "%d candidates timed)%s\n",
               tty ? "\r" : "", B, s, plan_cache_.seconds() - spent0, plan_cache_.built(), plan_cache_.reused(),
               plan_cache_.candidates_timed(), tty ? "\x1b[K" : "");
}

void ResNet50::calibrate(Context& ctx, int B) {
  if (precision_ != Precision::FP8) return;
  check_batch(B);
  require(prepared_.count(B) > 0,
          "batch size " + std::to_string(B) + " was not prepared; prepare it before calibrating.");
  for (Bottleneck& b : blocks_) b.begin_calibration(ctx);
  head_.begin_calibration(ctx);
  if (e4m3_stream_) stem_scale_.begin_calibration(ctx);
  calibrated_ = true;  // forward() below runs the bf16 plans, recording each fp8 layer's input amax
  calibrating_ = true;
  try {
    forward(ctx, B);
  } catch (...) {
    calibrating_ = false;
    throw;
  }
  calibrating_ = false;
  if (e4m3_stream_) stem_scale_.end_calibration(ctx, kFp8ActivationMargin);  // waits for the pass
  for (Bottleneck& b : blocks_) b.end_calibration(ctx);
  head_.end_calibration(ctx);
}

namespace {
// Calls f(conv, N, H, W) for every bottleneck convolution at its input shape for batch B.
template <class F>
void for_each_block_conv(const std::vector<Bottleneck>& blocks, int B, int size, F f) {
  for (const Bottleneck& b : blocks) {
    const auto c = b.convs();
    f(*c[0], B, size, size);
    f(*c[1], B, size, size);
    f(*c[2], B, b.out_size(size), b.out_size(size));
    if (b.has_downsample()) f(*c[3], B, size, size);
    size = b.out_size(size);
  }
}
}  // namespace

std::vector<std::string> ResNet50::fp8_layers(int B) const {
  std::vector<std::string> v;
  if (precision_ != Precision::FP8) return v;
  if (e4m3_stream_) {  // every block convolution
    for (const Bottleneck& b : blocks_)
      for (const Conv2d* c : b.convs()) v.push_back(c->name());
    if (head_.fc().runs_fp8(B)) v.push_back("fc");
    return v;
  }
  const int size = MaxPool::out_size(stem_shape_.out_size(image_size_));
  for_each_block_conv(blocks_, B, size, [&](const Conv2d& c, int N, int H, int W) {
    if (c.runs_fp8(N, H, W)) v.push_back(c.name());
  });
  if (head_.fc().runs_fp8(B)) v.push_back("fc");
  return v;
}

// The fc's line, and one on the convolutions: how many of the 1×1 stride-1 ones chose the e4m3
// GEMM (each one's choice is on its own plan line, Conv2d::describe) and why the rest stay bf16.
std::vector<std::string> ResNet50::describe_fp8(int B) const {
  if (precision_ != Precision::FP8) return {};
  std::vector<std::string> v;
  if (e4m3_stream_) {
    v.push_back("fc: " + head_.fc().fp8_report(B));
    v.push_back(
        "e4m3 stream (LAPTIME_RESNET_FP8): every tensor between two layers e4m3, written by the epilogue "
        "that computes it; conv1, conv3 and the downsamples fp8 GEMMs (conv3 adding the e4m3 residual), the "
        "3x3 convolutions CUTLASS fp8 implicit GEMMs; the stem bf16, writing e4m3 (layers/resnet50/e4m3_block.h)");
    return v;
  }
  int candidates = 0, chosen = 0, others = 0;  // the stem is not a block convolution: counted apart
  const int size = MaxPool::out_size(stem_shape_.out_size(image_size_));
  for_each_block_conv(blocks_, B, size, [&](const Conv2d& c, int N, int H, int W) {
    const std::string r = c.fp8_report(N, H, W);
    if (r.empty()) {
      ++others;
      return;
    }
    ++candidates;  // its line is the convolution's own plan line (Conv2d::describe)
    chosen += c.runs_fp8(N, H, W);
  });
  v.push_back("fc: " + head_.fc().fp8_report(B));
  if (!e4m3_stream_why_.empty()) v.push_back("e4m3 stream not used: " + e4m3_stream_why_);
  v.push_back("convolutions: " + std::to_string(chosen) + " of the " + std::to_string(candidates) +
              " 1x1 stride-1 ones run the e4m3 GEMM; the stem and the other " + std::to_string(others) +
              " (3x3, stride-2 downsamples) stay bf16: cuDNN's fp8 convolution graphs measured slower "
              "(layers/resnet50/conv2d.h)");
  return v;
}

void ResNet50::upload_input(const Context& ctx, const std::vector<float>& images, int B) {
  check_batch(B);
  const std::size_t n = std::size_t(B) * kImageChannels * image_size_ * image_size_;
  require(images.size() == n, "expected " + std::to_string(n) + " values for " + std::to_string(B) + " images of 3x" +
                                  std::to_string(image_size_) + "x" + std::to_string(image_size_) + ", got " +
                                  std::to_string(images.size()) + ".");
  CUDA_CHECK(cudaMemcpyAsync(staging_, images.data(), n * sizeof(float), cudaMemcpyHostToDevice, ctx.stream()));
  const int Hs = s2d_.side(image_size_);
  nchw_f32_to_s2d(dtype(), input_, staging_, B, kImageChannels, image_size_, image_size_, s2d_.pad, Hs, Hs,
                  s2d_.stored_channels, ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void ResNet50::forward(const Context& ctx, int B) {
  check_batch(B);
  if (!prepared_.count(B))  // `if`, not require(): no message built on every call
    throw Error("batch size " + std::to_string(B) + " was not prepared; call prepare(ctx, " + std::to_string(B) +
                ") at build.");
  if (precision_ == Precision::FP8 && !calibrated_)
    throw Error("ResNet-50 in fp8 was not calibrated; call calibrate(ctx, B) after upload_input(), at build.");
  if (e4m3_stream_ && !calibrating_) {
    forward_e4m3(ctx, B);
    return;
  }
  const int S = image_size_, Hs = s2d_.side(S);
  const int s1 = stem_shape_.out_size(S), s2 = MaxPool::out_size(s1);
  if (fused_) {  // conv1, ReLU and the max pool in one kernel, straight into the pool's slot
    fused_->forward(ctx, act_[1], input_, B, Hs);
  } else {
    stem_.forward(ctx, act_[0], input_, B, Hs, Hs);
    maxpool_.forward(ctx, act_[1], act_[0], B, s1, s1, cfg_.base_width);
  }
  if (calibrating_ && e4m3_stream_)
    stem_scale_.record(ctx, act_[1], DType::BF16, int64_t{B} * s2 * s2 * cfg_.base_width);
  int cur = 1, size = s2;
  for (const Bottleneck& b : blocks_) {
    b.forward(ctx, act_[1 - cur], act_[cur], B, size, size, scratch_);
    size = b.out_size(size);
    cur = 1 - cur;
  }
  head_.forward(ctx, logits_, act_[cur], B, size, size, pooled_);
}

// The fused stem writing e4m3 into act_[1] itself; or cuDNN's stem and the max pool into scratch_
// (which layer1.0 reuses only after), quantized once into act_[1]. Then the blocks e4m3 to e4m3
// and the head on the last block's e4m3 output with its scale.
void ResNet50::forward_e4m3(const Context& ctx, int B) {
  const int S = image_size_, Hs = s2d_.side(S);
  const int s1 = stem_shape_.out_size(S), s2 = MaxPool::out_size(s1);
  if (fused_) {  // the fused stem writes e4m3 itself
    fused_->forward(ctx, act_[1], input_, B, Hs, stem_scale_.inv_scale());
  } else {
    stem_.forward(ctx, act_[0], input_, B, Hs, Hs);
    maxpool_.forward(ctx, scratch_, act_[0], B, s1, s1, cfg_.base_width);
    NvtxRange range(ctx, NvtxLevel::Layer, quantize_name_);
    quantize_fp8(act_[1], stem_scale_.inv_scale(), DType::BF16, scratch_, int64_t{B} * s2 * s2 * cfg_.base_width,
                 ctx.stream());
  }
  int cur = 1, size = s2;
  const float* x_scale = stem_scale_.scale();
  for (const Bottleneck& b : blocks_) {
    b.forward_e4m3(ctx, act_[1 - cur], act_[cur], x_scale, B, size, size, scratch_);
    x_scale = b.e4m3().output_scale().scale();
    size = b.out_size(size);
    cur = 1 - cur;
  }
  head_.forward(ctx, logits_, act_[cur], B, size, size, pooled_, x_scale);
}

std::vector<float> ResNet50::logits_to_host(const Context& ctx, int B) const {
  check_batch(B);
  const std::size_t n = std::size_t(B) * cfg_.num_classes;
  DeviceBuffer staging(n * sizeof(float));
  convert_to_f32(staging.as<float>(), dtype(), logits_, static_cast<int64_t>(n), ctx.stream());
  std::vector<float> out(n);
  CUDA_CHECK(cudaMemcpyAsync(out.data(), staging.data(), n * sizeof(float), cudaMemcpyDeviceToHost, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return out;
}

std::vector<LayerCost> ResNet50::layer_costs(int B) const {
  check_batch(B);
  if (!prepared_.count(B))
    throw Error("internal: ResNet-50's layer costs were asked for batch " + std::to_string(B) +
                ", which it was not prepared for.");
  const int S = image_size_, s1 = stem_shape_.out_size(S), s2 = MaxPool::out_size(s1), width = cfg_.base_width;
  // The stem's FLOPs are the network's 7×7 convolution on the image, not those of the 4×4 one
  // it runs as on the space-to-depth input (which also multiplies the rewritten weight's zeros).
  std::vector<LayerCost> v{conv_cost(fused_ ? fused_->name() : stem_.name(), "", stem_shape_, B, S, S, false, dtype())};
  if (precision_ == Precision::FP8) v.back().precision = "bf16";  // the stem stays bf16
  if (fused_)  // the pooled output is what reaches memory; the pool has no range of its own
    v.back().output_bytes = double(B) * s2 * s2 * width * static_cast<double>(dtype_size(dtype()));
  else
    v.push_back(maxpool_.cost("", B, s1, s1, width));
  if (e4m3_stream_ && fused_) {
    v.front().output_bytes /= 2;  // the pooled output in e4m3
  } else if (e4m3_stream_) {      // the stem's pooled output read in bf16, written in e4m3
    const double n = double(B) * s2 * s2 * width;
    LayerCost q = streaming_cost(quantize_name_.str(), "", "elementwise", n, n, 0, 1.0);
    q.input_bytes = 2 * n;
    v.push_back(q);
  }
  int size = s2;
  for (const Bottleneck& b : blocks_) {
    b.append_costs(v, "", B, size, size);
    size = b.out_size(size);
  }
  head_.append_costs(v, "", B, size, size, e4m3_stream_);
  sum_composites(v);
  return v;
}

std::vector<std::string> ResNet50::describe_convs(int B) const {
  std::vector<std::string> v;
  const int Hs = s2d_.side(image_size_);
  const std::string s2d_input = std::to_string(Hs) + "x" + std::to_string(Hs) + "x" +
                                std::to_string(s2d_.stored_channels) + " space-to-depth input";
  if (fused_)
    v.push_back(fused_->name() + " (fused stem: the 4x4 convolution on the " + s2d_input +
                ", ReLU and the max pool in one kernel): " + fused_->describe(B, Hs));
  else
    v.push_back(stem_.name() + " (as a 4x4 convolution on the " + s2d_input + "; then maxpool" +
                (stem_refusal_.empty() ? "" : "; fused stem refused: " + stem_refusal_) +
                "): " + stem_.describe(B, Hs, Hs));
  int size = MaxPool::out_size(stem_shape_.out_size(image_size_));
  for (const Bottleneck& b : blocks_) {
    if (b.e4m3_stream()) {
      for (const std::string& line : b.e4m3().describe(B, size, size)) v.push_back(line);
      size = b.out_size(size);
      continue;
    }
    const auto c = b.convs();
    v.push_back(c[0]->name() + ": " + c[0]->describe(B, size, size));
    v.push_back(c[1]->name() + ": " + c[1]->describe(B, size, size));
    v.push_back(c[2]->name() + ": " + c[2]->describe(B, b.out_size(size), b.out_size(size)));
    if (b.has_downsample()) {
      const std::string sc = b.describe_shortcut(B, size, size);
      v.push_back(c[3]->name() + ": " + (sc.empty() ? c[3]->describe(B, size, size) : "shortcut " + sc));
    }
    size = b.out_size(size);
  }
  std::ostringstream os;
  os << "build: " << plan_cache_.built() << " distinct convolution plans, " << plan_cache_.reused()
     << " layers sharing one, " << plan_cache_.candidates_timed() << " candidates timed, " << std::fixed
     << std::setprecision(1) << plan_cache_.seconds() << " s";
  v.push_back(os.str());
  return v;
}

std::string ResNet50::stem_variant() const {
  if (fused_) return "stem fused";
  return stem_refusal_.empty() ? "stem cudnn" : "stem cudnn (fused refused: " + stem_refusal_ + ")";
}

std::vector<const Conv2d*> ResNet50::convs() const {
  std::vector<const Conv2d*> v{&stem_};
  for (const Bottleneck& b : blocks_)
    for (const Conv2d* c : b.convs()) v.push_back(c);
  return v;
}

}  // namespace laptime
