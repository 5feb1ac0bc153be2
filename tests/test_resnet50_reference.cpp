// ResNet-50 on the host: the CPU oracle against PyTorch's goldens, and the config, weight
// loading and BatchNorm folding (no GPU needed: runs in CI).
// The goldens come from a float64 torchvision model stored as float32, so the oracle (double
// loops) must match them to float32 rounding: 1e-6.
//
// Golden activations (tests/golden/golden_resnet50.py), NHWC, named by laptime's NVTX ranges:
//   images, conv1.out, maxpool.out, <block>.conv1.out, <block>.conv2.out,
//   <block>.downsample.out, <block>.out (= conv3's output: residual added, ReLU applied),
//   avgpool.out, logits. A layer's input is the output before it; a block's is the previous
//   block's output (maxpool.out for the first).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "layers/resnet50/space_to_depth.h"
#include "models/resnet50.h"
#include "tests/reference/resnet50_ref.h"
#include "tests/support/compare.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

constexpr double kOracleBound = 1e-6;

class Resnet50Reference : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg = ResNetConfig::from_file(weights_file);
    p = read_resnet50_params(weights_file, cfg);
    B = static_cast<int>(acts.meta_int("B"));
    S = static_cast<int>(acts.meta_int("S"));
    blocks = ref::blocks(cfg, S);
  }
  std::vector<float> golden(const std::string& n) const { return test::golden(acts, n); }
  std::vector<float> block_input(size_t i) const {
    return golden(i == 0 ? "maxpool.out" : blocks[i - 1].prefix + ".out");
  }

  SafeTensors weights_file = SafeTensors::open(test::golden_path("resnet50_tiny.safetensors"));
  SafeTensors acts = SafeTensors::open(test::golden_path("resnet50_tiny_activations.safetensors"));
  ResNetConfig cfg;
  HostWeights p;
  int B = 0, S = 0;
  std::vector<ref::BlockSpec> blocks;
};

TEST_F(Resnet50Reference, ConfigFromMetadata) {
  EXPECT_EQ(cfg.layers, (std::array<int, 4>{2, 1, 1, 2}));
  EXPECT_EQ(cfg.base_width, 8);
  EXPECT_EQ(cfg.num_classes, 10);
  EXPECT_FLOAT_EQ(cfg.bn_eps, 1e-5f);
  EXPECT_EQ(S % 2, 1) << "the goldens use an odd image size on purpose";
}

TEST_F(Resnet50Reference, Stem) {
  const auto y =
      ref::conv_bn(golden("images"), p, "conv1", "bn1", B, S, S, 3, cfg.base_width, 7, 2, 3, cfg.bn_eps, true);
  EXPECT_TRUE(test::close(y, golden("conv1.out"), kOracleBound));
}

TEST_F(Resnet50Reference, MaxPool) {
  const int s1 = ref::conv_out(S, 7, 2, 3);
  EXPECT_TRUE(test::close(ref::maxpool3x3s2(golden("conv1.out"), B, s1, s1, cfg.base_width), golden("maxpool.out"),
                          kOracleBound));
}

TEST_F(Resnet50Reference, BlockConvolutions) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const ref::BlockSpec& b = blocks[i];
    const std::string& q = b.prefix;
    SCOPED_TRACE(q);
    const int H = b.in_size, Ho = b.out_size, out = 4 * b.width;
    const auto x = block_input(i);
    EXPECT_TRUE(test::close(
        ref::conv_bn(x, p, q + ".conv1", q + ".bn1", B, H, H, b.in_channels, b.width, 1, 1, 0, cfg.bn_eps, true),
        golden(q + ".conv1.out"), kOracleBound));
    EXPECT_TRUE(test::close(ref::conv_bn(golden(q + ".conv1.out"), p, q + ".conv2", q + ".bn2", B, H, H, b.width,
                                         b.width, 3, b.stride, 1, cfg.bn_eps, true),
                            golden(q + ".conv2.out"), kOracleBound));
    const bool project = b.stride != 1 || b.in_channels != out;
    EXPECT_EQ(project, acts.find(q + ".downsample.out") != nullptr);
    if (project) {
      EXPECT_TRUE(test::close(ref::conv_bn(x, p, q + ".downsample.0", q + ".downsample.1", B, H, H, b.in_channels, out,
                                           1, b.stride, 0, cfg.bn_eps, false),
                              golden(q + ".downsample.out"), kOracleBound));
    }
    // conv3: residual added and ReLU applied, as the fused layer does.
    const auto t3 = ref::conv_bn(golden(q + ".conv2.out"), p, q + ".conv3", q + ".bn3", B, Ho, Ho, b.width, out, 1, 1,
                                 0, cfg.bn_eps, false);
    EXPECT_TRUE(test::close(ref::relu(ref::add(t3, project ? golden(q + ".downsample.out") : x)), golden(q + ".out"),
                            kOracleBound));
  }
}

TEST_F(Resnet50Reference, Blocks) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const ref::BlockSpec& b = blocks[i];
    SCOPED_TRACE(b.prefix);
    const auto y = ref::bottleneck(block_input(i), p, b.prefix, B, b.in_size, b.in_size, b.in_channels, b.width,
                                   b.stride, cfg.bn_eps);
    EXPECT_TRUE(test::close(y, golden(b.prefix + ".out"), kOracleBound));
  }
}

TEST_F(Resnet50Reference, Head) {
  const ref::BlockSpec& last = blocks.back();
  const int C = cfg.features();
  EXPECT_TRUE(test::close(ref::global_avgpool(golden(last.prefix + ".out"), B, last.out_size, last.out_size, C),
                          golden("avgpool.out"), kOracleBound));
  EXPECT_TRUE(test::close(
      ref::linear(golden("avgpool.out"), p.at("fc.weight").values, p.at("fc.bias").values, B, C, cfg.num_classes),
      golden("logits"), kOracleBound));
}

TEST_F(Resnet50Reference, WholeModelLogits) {
  EXPECT_TRUE(test::close(ref::resnet50(golden("images"), p, cfg, B, S), golden("logits"), kOracleBound));
}

// --- host-only checks that need no fixtures ------------------------------------------------

ResNetConfig tiny_config() {
  ResNetConfig c;
  c.layers = {1, 2, 1, 1};
  c.base_width = 4;
  c.num_classes = 7;
  c.image_size = 37;
  return c;
}

// Runs `fn`, expecting an Error whose message contains `fragment`.
template <class F>
void expect_error(F fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// A safetensors image of `params` (F32), with laptime's resnet50 metadata for `cfg`.
SafeTensors as_file(const HostWeights& params, const ResNetConfig& cfg, const std::string& name) {
  std::vector<TensorBlob> blobs;
  for (const auto& [n, t] : params.all()) {
    TensorBlob b{n, DType::F32, t.shape, std::vector<std::byte>(t.values.size() * sizeof(float))};
    std::memcpy(b.bytes.data(), t.values.data(), b.bytes.size());
    blobs.push_back(std::move(b));
  }
  std::string layers;
  for (int n : cfg.layers) layers += (layers.empty() ? "" : ",") + std::to_string(n);
  const std::map<std::string, std::string> meta{{"laptime.format", "1"},
                                                {"laptime.model", "resnet50"},
                                                {"resnet.layers", layers},
                                                {"resnet.base_width", std::to_string(cfg.base_width)},
                                                {"resnet.num_classes", std::to_string(cfg.num_classes)},
                                                {"resnet.bn_eps", "1e-05"},
                                                {"resnet.image_size", std::to_string(cfg.image_size)}};
  return SafeTensors::from_bytes(serialize_safetensors(blobs, meta), name);
}

TEST(Resnet50Config, RejectsBadConfigs) {
  ResNetConfig c = tiny_config();
  c.layers[2] = 0;
  expect_error([&] { c.validate(); }, "stage 3 must have at least one block");
  c = tiny_config();
  c.base_width = 0;
  expect_error([&] { c.validate(); }, "base_width");
  c = tiny_config();
  c.bn_eps = -1.f;
  expect_error([&] { c.validate(); }, "bn_eps");
  c = tiny_config();
  c.num_classes = 0;
  expect_error([&] { c.validate(); }, "num_classes");
}

TEST(Resnet50Config, BadBatchIsRefused) {
  expect_error([] { check_resnet50_input(ResNetConfig::resnet50(), 0, 224); }, "batch size must be at least 1");
}

TEST(Resnet50Config, BadImageSizeIsRefused) {
  expect_error([] { check_resnet50_input(ResNetConfig::resnet50(), 1, 31); }, "too small");
  check_resnet50_input(ResNetConfig::resnet50(), 1, kMinImageSize);  // the smallest that works
  expect_error([] { check_resnet50_input(ResNetConfig::resnet50(), 4096, 224); }, "2^31");
}

TEST(Resnet50Config, RoundTripsThroughMetadata) {
  const ResNetConfig c = tiny_config();
  const ResNetConfig r = ResNetConfig::from_file(as_file(random_resnet50_params(c, 1), c, "tiny.safetensors"));
  EXPECT_EQ(r.layers, c.layers);
  EXPECT_EQ(r.base_width, c.base_width);
  EXPECT_EQ(r.num_classes, c.num_classes);
  EXPECT_EQ(r.image_size, c.image_size);
  EXPECT_FLOAT_EQ(r.bn_eps, c.bn_eps);
}

TEST(Resnet50Config, WrongModelInFileIsRefused) {
  const std::map<std::string, std::string> meta{{"laptime.model", "gpt2"}, {"laptime.format", "1"}};
  SafeTensors f = SafeTensors::from_bytes(serialize_safetensors({}, meta), "gpt2.safetensors");
  expect_error([&] { ResNetConfig::from_file(f); }, "not resnet50");
}

TEST(Resnet50Weights, WrongChannelCountIsNamed) {
  const ResNetConfig c = tiny_config();
  HostWeights params = random_resnet50_params(c, 3);
  HostWeights bad;
  for (const auto& [n, t] : params.all()) {
    if (n == "layer2.0.conv2.weight") {  // [8, 8, 3, 3] with 9 input channels instead
      std::vector<int64_t> shape = t.shape;
      shape[1] += 1;
      bad.add(n, shape, std::vector<float>(shape[0] * shape[1] * shape[2] * shape[3], 0.f));
    } else {
      bad.add(n, t.shape, t.values);
    }
  }
  const SafeTensors f = as_file(bad, c, "bad.safetensors");
  expect_error([&] { load_resnet50_weights(f, c); }, "'layer2.0.conv2.weight'");
}

TEST(Resnet50Weights, MissingBatchNormStatisticIsNamed) {
  const ResNetConfig c = tiny_config();
  HostWeights params = random_resnet50_params(c, 3), bad;
  for (const auto& [n, t] : params.all())
    if (n != "layer1.0.bn2.running_var") bad.add(n, t.shape, t.values);
  const SafeTensors f = as_file(bad, c, "bad.safetensors");
  expect_error([&] { load_resnet50_weights(f, c); }, "'layer1.0.bn2.running_var'");
}

TEST(Resnet50Weights, NegativeVarianceIsNamed) {
  const ResNetConfig c = tiny_config();
  HostWeights params = random_resnet50_params(c, 3), bad;
  for (const auto& [n, t] : params.all()) {
    std::vector<float> v = t.values;
    if (n == "layer3.0.downsample.1.running_var") v[2] = -0.5f;
    bad.add(n, t.shape, std::move(v));
  }
  expect_error([&] { fold_resnet50_params(bad, c); }, "'layer3.0.downsample.1'");
}

TEST(Resnet50Weights, RandomParametersAreSeededAndComplete) {
  const ResNetConfig c = tiny_config();
  const HostWeights a = random_resnet50_params(c, 1), b = random_resnet50_params(c, 1),
                    d = random_resnet50_params(c, 2);
  EXPECT_EQ(a.at("layer2.1.conv2.weight").values, b.at("layer2.1.conv2.weight").values);
  EXPECT_NE(a.at("layer2.1.conv2.weight").values, d.at("layer2.1.conv2.weight").values);
  // Every name the file format lists: the same tensors a file of this config must hold.
  const HostWeights from_file = read_resnet50_params(as_file(a, c, "a.safetensors"), c);
  EXPECT_EQ(from_file.all().size(), a.all().size());
  int64_t expected = int64_t{c.num_classes} * c.features() + c.num_classes;
  for (const ResNetConv& conv : resnet50_convs(c)) expected += conv.shape.weight_count() + 4 * conv.shape.out_channels;
  EXPECT_EQ(a.param_count(), expected);
  const auto& var = a.at("layer1.0.bn1.running_var").values;
  EXPECT_TRUE(std::all_of(var.begin(), var.end(), [](float v) { return v >= 0.5f && v <= 1.5f; }));
}

// Folding, checked against the unfolded oracle: a direct KRSC convolution with the folded
// weight and bias must equal batchnorm(conv(x)) with the original ones.
TEST(Resnet50Weights, FoldingMatchesUnfoldedBatchNorm) {
  const ResNetConfig c = tiny_config();
  const HostWeights params = random_resnet50_params(c, 5);
  const HostWeights folded = fold_resnet50_params(params, c);
  const int N = 2, H = 9, W = 7;
  for (const ResNetConv& conv : resnet50_convs(c)) {
    if (conv.name != "layer2.0.conv2" && conv.name != "conv1" && conv.name != "layer3.0.downsample") continue;
    SCOPED_TRACE(conv.name);
    const ConvShape& s = conv.shape;
    const auto x = test::random_vec(static_cast<size_t>(N) * H * W * s.in_channels, 11);
    const std::string stem = conv.weight.substr(0, conv.weight.size() - std::strlen(".weight"));
    const auto want = ref::conv_bn(x, params, stem, conv.bn, N, H, W, s.in_channels, s.out_channels, s.kernel, s.stride,
                                   s.pad, c.bn_eps, false);
    const auto& wk = folded.at(conv.name + ".weight");
    const auto& bias = folded.at(conv.name + ".bias").values;
    EXPECT_EQ(wk.shape, (std::vector<int64_t>{s.out_channels, s.kernel, s.kernel, s.in_channels}));
    const int Ho = s.out_size(H), Wo = s.out_size(W);
    std::vector<float> got(static_cast<size_t>(N) * Ho * Wo * s.out_channels);
    for (int n = 0; n < N; ++n)
      for (int ho = 0; ho < Ho; ++ho)
        for (int wo = 0; wo < Wo; ++wo)
          for (int k = 0; k < s.out_channels; ++k) {
            double acc = bias[k];
            for (int r = 0; r < s.kernel; ++r)
              for (int q = 0; q < s.kernel; ++q) {
                const int h = ho * s.stride - s.pad + r, w = wo * s.stride - s.pad + q;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                for (int ci = 0; ci < s.in_channels; ++ci)
                  acc += double(x[((static_cast<size_t>(n) * H + h) * W + w) * s.in_channels + ci]) *
                         wk.values[((static_cast<size_t>(k) * s.kernel + r) * s.kernel + q) * s.in_channels + ci];
              }
            got[((static_cast<size_t>(n) * Ho + ho) * Wo + wo) * s.out_channels + k] = static_cast<float>(acc);
          }
    EXPECT_TRUE(test::close(got, want, 1e-6));
  }
}

// The stem as it runs (layers/resnet50/space_to_depth.h): a 4x4 stride-1 convolution on the 2x2
// space-to-depth transform, with the rewritten weight, equals the 7x7 stride-2 pad-3 one on the
// image. The transform is written here from its definition, independently of the device kernel;
// odd and even sides, both storage widths (16 channels for bf16, 12 for fp32).
TEST(Resnet50SpaceToDepth, StemEqualsTheSevenBySevenConvolution) {
  const ConvShape stem{3, 5, 7, 2, 3};
  for (const DType dtype : {DType::BF16, DType::F32})
    for (const int S : {32, 33, 45}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " S=" << S);
      const SpaceToDepthStem s2d = space_to_depth_stem(stem, dtype);
      EXPECT_EQ(s2d.stored_channels, dtype == DType::BF16 ? 16 : 12);
      EXPECT_EQ(s2d.out_size(S), ref::conv_out(S, 7, 2, 3));
      const int N = 2, K = stem.out_channels, C = 3, Hs = s2d.side(S), Cs = s2d.stored_channels;
      const auto x = test::random_vec(static_cast<size_t>(N) * S * S * C, 21 + S);  // NHWC
      WeightRng rng(7);
      const std::vector<float> w_oihw = rng.normal(stem.weight_count(), 0.f, 0.2f);
      std::vector<float> w_krsc(w_oihw.size());
      for (int o = 0; o < K; ++o)
        for (int c = 0; c < C; ++c)
          for (int r = 0; r < 7; ++r)
            for (int q = 0; q < 7; ++q) w_krsc[((o * 7 + r) * 7 + q) * C + c] = w_oihw[((o * C + c) * 7 + r) * 7 + q];
      const std::vector<float> w2 = space_to_depth_weight(s2d, w_krsc, K);  // [K, 4, 4, Cs]
      ASSERT_EQ(w2.size(), static_cast<size_t>(K) * 16 * Cs);
      std::vector<float> w2_oihw(w2.size());
      for (int o = 0; o < K; ++o)
        for (int c = 0; c < Cs; ++c)
          for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) w2_oihw[((o * Cs + c) * 4 + a) * 4 + b] = w2[((o * 4 + a) * 4 + b) * Cs + c];
      // s2d[n, i, j, (2dy + dx)·3 + c] = x[n, 2i + dy − 3, 2j + dx − 3, c], zero outside; channels 12.. zero.
      std::vector<float> xs(static_cast<size_t>(N) * Hs * Hs * Cs, 0.f);
      for (int n = 0; n < N; ++n)
        for (int i = 0; i < Hs; ++i)
          for (int j = 0; j < Hs; ++j)
            for (int dy = 0; dy < 2; ++dy)
              for (int dx = 0; dx < 2; ++dx)
                for (int c = 0; c < C; ++c) {
                  const int h = 2 * i + dy - 3, w = 2 * j + dx - 3;
                  if (h < 0 || h >= S || w < 0 || w >= S) continue;
                  xs[((static_cast<size_t>(n) * Hs + i) * Hs + j) * Cs + (2 * dy + dx) * C + c] =
                      x[((static_cast<size_t>(n) * S + h) * S + w) * C + c];
                }
      const auto want = ref::conv2d(x, w_oihw, N, S, S, C, K, 7, 2, 3);
      const auto got = ref::conv2d(xs, w2_oihw, N, Hs, Hs, Cs, K, 4, 1, 0);
      EXPECT_TRUE(test::close(got, want, 1e-6));
    }
  expect_error([] { space_to_depth_stem(ConvShape{3, 8, 7, 1, 3}, DType::BF16); }, "stride-2");
}

}  // namespace
}  // namespace laptime
