// ResNet-50's CUDA layers against the CPU oracle (fresh random weights and inputs, shape
// tables with odd batches and odd, non-square spatial sizes, every precision, both
// convolution routes) and against PyTorch's goldens. Outputs are poisoned with NaN before
// each run, so an element a kernel forgets to write fails.
// Without a GPU every test here skips, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>

#include "kernels/concat.cuh"
#include "kernels/convert.cuh"
#include "kernels/image.cuh"
#include "kernels/stem.cuh"
#include "layers/resnet50/fused_stem.h"
#include "layers/resnet50/space_to_depth.h"
#include "models/resnet50.h"
#include "tests/reference/resnet50_ref.h"
#include "tests/support/compare.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

using test::close;
using test::DeviceArray;

const Precision kPrecisions[] = {Precision::FP32, Precision::TF32, Precision::BF16};
const ConvRoute kRoutes[] = {ConvRoute::Auto, ConvRoute::Separate, ConvRoute::Gemm};

bool gemm_shape(const ConvShape& s) { return s.kernel == 1 && s.stride == 1 && s.pad == 0; }

// Draws one convolution and its BatchNorm as the file holds them (`<conv>.weight` OIHW,
// `<bn>.{weight,bias,running_mean,running_var}`) into `raw`, and their folded form
// (`<name>.weight` KRSC, `<name>.bias`) into `folded`. Distributions as random_resnet50_params.
void add_conv_bn(HostWeights* raw, HostWeights* folded, const std::string& name, const std::string& conv,
                 const std::string& bn, const ConvShape& s, WeightRng* rng) {
  const int64_t K = s.out_channels;
  raw->add(conv + ".weight", {K, s.in_channels, s.kernel, s.kernel},
           rng->normal(s.weight_count(), 0.f, std::sqrt(2.f / (K * s.kernel * s.kernel))));
  raw->add(bn + ".weight", {K}, rng->uniform(K, 0.5f, 1.5f));
  raw->add(bn + ".bias", {K}, rng->normal(K, 0.f, 0.1f));
  raw->add(bn + ".running_mean", {K}, rng->normal(K, 0.f, 0.1f));
  raw->add(bn + ".running_var", {K}, rng->uniform(K, 0.5f, 1.5f));
  auto v = [&](const std::string& n) -> const std::vector<float>& { return raw->at(n).values; };
  FoldedConv f = fold_batchnorm(s, v(conv + ".weight"), v(bn + ".weight"), v(bn + ".bias"), v(bn + ".running_mean"),
                                v(bn + ".running_var"), 1e-5f, bn);
  folded->add(name + ".weight", {K, s.kernel, s.kernel, s.in_channels}, std::move(f.weight));
  folded->add(name + ".bias", {K}, std::move(f.bias));
}

// NCHW <-> NHWC on the host, for feeding upload_input() from NHWC references and back.
std::vector<float> nhwc_to_nchw(const std::vector<float>& x, int N, int H, int W, int C) {
  std::vector<float> y(x.size());
  for (int n = 0; n < N; ++n)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w)
        for (int c = 0; c < C; ++c)
          y[((static_cast<size_t>(n) * C + c) * H + h) * W + w] = x[((static_cast<size_t>(n) * H + h) * W + w) * C + c];
  return y;
}

class Resnet50LayerTest : public test::PrecisionTest {};

struct ConvCase {
  int N, H, W;
  ConvShape shape;
  ConvActivation act;
  bool residual;
};

TEST_P(Resnet50LayerTest, Conv2d) {
  const ConvCase cases[] = {
      {2, 33, 31, {3, 16, 7, 2, 3}, ConvActivation::Relu, false},   // the stem, odd sides
      {3, 13, 11, {24, 16, 1, 1, 0}, ConvActivation::Relu, false},  // a block's conv1
      {1, 15, 9, {16, 16, 3, 2, 1}, ConvActivation::Relu, false},   // conv2 with the stride
      {5, 7, 7, {32, 64, 3, 1, 1}, ConvActivation::Relu, false},
      {3, 9, 13, {40, 24, 1, 1, 0}, ConvActivation::Relu, true},    // conv3: residual + ReLU
      {3, 11, 9, {24, 40, 1, 2, 0}, ConvActivation::None, false},   // downsample: no activation
      {2, 56, 56, {64, 256, 1, 1, 0}, ConvActivation::Relu, true},  // ResNet-50's own layer1 conv3
      {3, 7, 5, {24, 40, 1, 1, 0}, ConvActivation::None, false},    // 1x1 without activation (Gemm: Bias only)
      {2, 19, 19, {16, 24, 4, 1, 0}, ConvActivation::Relu, false},  // the space-to-depth stem's shape
  };
  for (const ConvRoute route : kRoutes)
    for (const ConvCase& c : cases) {
      const ConvShape& s = c.shape;
      if (route == ConvRoute::Gemm && !gemm_shape(s)) continue;
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " route " << conv_route_name(route) << " N=" << c.N
                                        << " H=" << c.H << " W=" << c.W << " " << s.in_channels << "->"
                                        << s.out_channels << " k" << s.kernel << " s" << s.stride
                                        << (c.act == ConvActivation::Relu ? " relu" : "")
                                        << (c.residual ? " +residual" : ""));
      WeightRng rng(seed);
      HostWeights raw, folded;
      add_conv_bn(&raw, &folded, "conv", "conv", "bn", s, &rng);
      DeviceWeights w(*ctx, folded, dtype());
      Conv2d conv(w, "conv", s, c.act, precision());
      const int Ho = s.out_size(c.H), Wo = s.out_size(c.W);
      const size_t n_out = static_cast<size_t>(c.N) * Ho * Wo * s.out_channels;
      const auto x = test::random_vec(static_cast<size_t>(c.N) * c.H * c.W * s.in_channels, seed + 1);
      const auto z = test::random_vec(n_out, seed + 2);
      DeviceArray dx(dtype(), x), dz(dtype(), z), dy(dtype(), n_out);
      conv.prepare(*ctx, c.N, c.H, c.W, dy.data(), dx.data(), c.residual ? dz.data() : nullptr, route);
      dy.poison();
      conv.forward(*ctx, dy.data(), dx.data(), c.N, c.H, c.W, c.residual ? dz.data() : nullptr);

      auto want = ref::conv_bn(x, raw, "conv", "bn", c.N, c.H, c.W, s.in_channels, s.out_channels, s.kernel, s.stride,
                               s.pad, 1e-5f, false);
      if (c.residual) want = ref::add(want, z);
      if (c.act == ConvActivation::Relu) want = ref::relu(want);
      EXPECT_TRUE(close(dy.download(), want, bound())) << "ran " << conv.describe(c.N, c.H, c.W);
      if (route != ConvRoute::Auto) {
        EXPECT_EQ(conv.route(c.N, c.H, c.W), route);
      }
    }
}

// The folded shortcut's copy (kernels/concat.cuh) against a host loop: [a ; b strided] side by
// side, on the vector path (16-byte rows) and the element path (rows that are not), odd sides and
// both strides.
TEST_P(Resnet50LayerTest, ConcatShortcut) {
  for (auto [N, H, W, Ca, Cb, stride] : {std::tuple{2, 9, 13, 8, 24, 2},
                                         {3, 7, 5, 16, 16, 1},
                                         {1, 11, 11, 4, 12, 2},
                                         {2, 56, 56, 64, 64, 1},
                                         {1, 5, 3, 3, 5, 2}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " N=" << N << " H=" << H << " W=" << W << " Ca=" << Ca
                                      << " Cb=" << Cb << " stride " << stride);
    const int Ho = (H + stride - 1) / stride, Wo = (W + stride - 1) / stride, C = Ca + Cb;
    const size_t pixels = static_cast<size_t>(N) * Ho * Wo;
    const auto a = test::random_vec(pixels * Ca, seed + 3);
    const auto b = test::random_vec(static_cast<size_t>(N) * H * W * Cb, seed + 4);
    DeviceArray da(dtype(), a), db(dtype(), b), dy(dtype(), pixels * C);
    dy.poison();
    concat_shortcut_forward(dtype(), dy.data(), da.data(), Ca, db.data(), Cb, N, H, W, stride, ctx->stream());
    const std::vector<float> got = dy.download();
    const std::vector<float> a_back = da.download(), b_back = db.download();  // as stored (bf16-rounded)
    size_t wrong = 0;
    for (int n = 0; n < N; ++n)
      for (int h = 0; h < Ho; ++h)
        for (int w = 0; w < Wo; ++w) {
          const size_t p = (static_cast<size_t>(n) * Ho + h) * Wo + w;
          const size_t src = (static_cast<size_t>(n) * H + h * stride) * W + w * stride;
          for (int c = 0; c < Ca; ++c) wrong += got[p * C + c] != a_back[p * Ca + c];
          for (int c = 0; c < Cb; ++c) wrong += got[p * C + Ca + c] != b_back[src * Cb + c];
        }
    EXPECT_EQ(wrong, 0u);
  }
}

// Identical convolutions prepared through one ConvPlanCache share one plan, and each still
// computes with its own weights; a different shape gets its own plan.
TEST_P(Resnet50LayerTest, SharedPlans) {
  const ConvShape s{24, 32, 3, 1, 1};
  const int N = 2, H = 9, W = 11;
  WeightRng rng(seed);
  HostWeights raw, folded;
  add_conv_bn(&raw, &folded, "a", "a", "a_bn", s, &rng);
  add_conv_bn(&raw, &folded, "b", "b", "b_bn", s, &rng);
  DeviceWeights w(*ctx, folded, dtype());
  Conv2d a(w, "a", s, ConvActivation::Relu, precision()), b(w, "b", s, ConvActivation::Relu, precision());
  const auto x = test::random_vec(static_cast<size_t>(N) * H * W * s.in_channels, seed + 1);
  const size_t n_out = static_cast<size_t>(N) * H * W * s.out_channels;
  DeviceArray dx(dtype(), x), ya(dtype(), n_out), yb(dtype(), n_out);
  ConvPlanCache cache;
  a.prepare(*ctx, N, H, W, ya.data(), dx.data(), nullptr, ConvRoute::Auto, &cache);
  b.prepare(*ctx, N, H, W, yb.data(), dx.data(), nullptr, ConvRoute::Auto, &cache);
  b.prepare(*ctx, N, H - 1, W, yb.data(), dx.data(), nullptr, ConvRoute::Auto, &cache);  // another shape: its own plan
  EXPECT_EQ(cache.built(), 2);
  EXPECT_EQ(cache.reused(), 1);
  EXPECT_EQ(a.describe(N, H, W), b.describe(N, H, W));
  ya.poison();
  yb.poison();
  a.forward(*ctx, ya.data(), dx.data(), N, H, W);
  b.forward(*ctx, yb.data(), dx.data(), N, H, W);
  for (const char* name : {"a", "b"}) {
    SCOPED_TRACE(name);
    const auto want = ref::relu(ref::conv_bn(x, raw, name, std::string(name) + "_bn", N, H, W, s.in_channels,
                                             s.out_channels, 3, 1, 1, 1e-5f, false));
    EXPECT_TRUE(close((name[0] == 'a' ? ya : yb).download(), want, bound()));
  }
}

// The stem as the model runs it: the device's space-to-depth transform of NCHW images
// (kernels/image.cu) and the 4x4 convolution with the rewritten weight, against the oracle's
// 7x7 stride-2 convolution of the same images; odd sides, output poisoned.
TEST_P(Resnet50LayerTest, SpaceToDepthStem) {
  const ConvShape stem{3, 16, 7, 2, 3};
  for (auto [N, S] : {std::tuple{2, 33}, {1, 45}, {3, 32}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " N=" << N << " S=" << S);
    WeightRng rng(seed);
    HostWeights raw, folded;
    add_conv_bn(&raw, &folded, "conv1", "conv1", "bn1", stem, &rng);
    const SpaceToDepthStem s2d = space_to_depth_stem(stem, dtype());
    HostWeights h;
    h.add("conv1.weight", {stem.out_channels, 4, 4, s2d.stored_channels},
          space_to_depth_weight(s2d, folded.at("conv1.weight").values, stem.out_channels));
    h.add("conv1.bias", {stem.out_channels}, folded.at("conv1.bias").values);
    DeviceWeights w(*ctx, h, dtype());
    Conv2d conv(w, "conv1", s2d.conv(stem.out_channels), ConvActivation::Relu, precision());
    const int Hs = s2d.side(S), So = s2d.out_size(S);
    const auto images = test::random_vec(static_cast<size_t>(N) * S * S * 3, seed + S);  // NHWC
    const auto nchw = nhwc_to_nchw(images, N, S, S, 3);
    DeviceArray dimg(DType::F32, nchw), dxs(dtype(), static_cast<size_t>(N) * Hs * Hs * s2d.stored_channels),
        dy(dtype(), static_cast<size_t>(N) * So * So * stem.out_channels);
    dxs.poison();
    nchw_f32_to_s2d(dtype(), dxs.data(), static_cast<const float*>(dimg.data()), N, 3, S, S, s2d.pad, Hs, Hs,
                    s2d.stored_channels, ctx->stream());
    conv.prepare(*ctx, N, Hs, Hs, dy.data(), dxs.data(), nullptr);
    dy.poison();
    conv.forward(*ctx, dy.data(), dxs.data(), N, Hs, Hs);
    const auto want =
        ref::relu(ref::conv_bn(images, raw, "conv1", "bn1", N, S, S, 3, stem.out_channels, 7, 2, 3, 1e-5f, false));
    EXPECT_TRUE(close(dy.download(), want, bound())) << "ran " << conv.describe(N, Hs, Hs);
  }
}

// The fused stem (kernels/stem.cu: s2d conv + bias + ReLU + max pool in one kernel) against the
// oracle's 7x7 stride-2 convolution, ReLU and 3x3/2 max pool of the same images, as the bf16
// cuDNN stem above is checked (same bound): odd sides (61: conv side 31, pooled 16), the real
// 224, 8 (the tiny model's width) to 64 channels, several batches on one layer, output poisoned;
// production and each of laptime lab's versions (kernels/lab/stem.cu) where it runs.
// Other precisions: the kernel refuses, with a reason.
TEST_P(Resnet50LayerTest, FusedStem) {
  if (precision() != Precision::BF16) {
    const std::string why = fused_stem_refusal(dtype(), 12, 4, 64, 115, 1 << 30);
    EXPECT_NE(why.find("bf16 only"), std::string::npos) << why;
    return;
  }
  struct Case {
    int C, S;
    std::vector<int> batches;  // prepared on one layer, then run in turn
  };
  const Case cases[] = {{8, 61, {2, 1}}, {64, 61, {3}},    {64, 224, {2, 1}}, {8, 224, {1}},
                        {24, 33, {3}},   {64, 45, {5, 2}}, {16, 32, {1}},     {40, 62, {2}}};
  for (const Case& k : cases) {
    const int C = k.C, S = k.S;
    const std::vector<int>& batches = k.batches;
    const ConvShape stem{3, C, 7, 2, 3};
    WeightRng rng(seed + C);
    HostWeights raw, folded;
    add_conv_bn(&raw, &folded, "conv1", "conv1", "bn1", stem, &rng);
    const SpaceToDepthStem s2d = space_to_depth_stem(stem, dtype());
    HostWeights h;
    h.add("conv1.weight", {C, 4, 4, s2d.stored_channels},
          space_to_depth_weight(s2d, folded.at("conv1.weight").values, C));
    h.add("conv1.bias", {C}, folded.at("conv1.bias").values);
    DeviceWeights w(*ctx, h, dtype());
    const int Hs = s2d.side(S), So = s2d.out_size(S), Po = MaxPool::out_size(So);
    // Production (-1: wgmma where it runs, else mma.sync), then laptime lab's four versions
    // (direct, mma.sync, wgmma, wgmma with the pool overlapped), each where it runs this case.
    for (int version = -1; version < 4; ++version) {
      if (version >= 0 && !lab::stem_refusal(version, Hs, C, ctx->device()).empty()) continue;
      FusedStem fused(w, "conv1", C, version);
      for (int N : batches) fused.prepare(*ctx, N, Hs);
      if (version == -1 && lab::stem_refusal(2, Hs, C, ctx->device()).empty()) {  // production is the wgmma core here
        const std::string d = fused.describe(batches[0], Hs);
        EXPECT_TRUE(d.find("wgmma") != std::string::npos && d.find("overlapped") == std::string::npos) << d;
      }
      for (int N : batches) {
        SCOPED_TRACE(::testing::Message()
                     << "seed " << seed << " N=" << N << " S=" << S << " C=" << C << ": " << fused.describe(N, Hs));
        const auto images = test::random_vec(static_cast<size_t>(N) * S * S * 3, seed + S + N);  // NHWC
        DeviceArray dimg(DType::F32, nhwc_to_nchw(images, N, S, S, 3)),
            dxs(dtype(), static_cast<size_t>(N) * Hs * Hs * s2d.stored_channels),
            dy(dtype(), static_cast<size_t>(N) * Po * Po * C);
        nchw_f32_to_s2d(dtype(), dxs.data(), static_cast<const float*>(dimg.data()), N, 3, S, S, s2d.pad, Hs, Hs,
                        s2d.stored_channels, ctx->stream());
        dy.poison();
        fused.forward(*ctx, dy.data(), dxs.data(), N, Hs);
        const auto conv = ref::relu(ref::conv_bn(images, raw, "conv1", "bn1", N, S, S, 3, C, 7, 2, 3, 1e-5f, false));
        EXPECT_TRUE(close(dy.download(), ref::maxpool3x3s2(conv, N, So, So, C), bound()));
      }
    }
  }
}

TEST_P(Resnet50LayerTest, MaxPool) {
  // C = 6 and 12 take the scalar path (not a whole number of 16-byte vectors), the others the
  // vector path, which makes two outputs a thread: odd output widths (W = 17, 1, 57) leave the
  // last pair half used; 58×57 spans several blocks.
  for (auto [N, H, W, C] : {std::tuple{1, 7, 7, 8},
                            {3, 13, 11, 64},
                            {2, 30, 17, 24},
                            {1, 1, 1, 16},
                            {2, 9, 9, 6},
                            {1, 12, 10, 12},
                            {2, 58, 57, 32}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " N=" << N << " H=" << H << " W=" << W << " C=" << C);
    MaxPool pool("maxpool", dtype());
    const auto x = test::random_vec(static_cast<size_t>(N) * H * W * C, seed);
    DeviceArray dx(dtype(), x), dy(dtype(), static_cast<size_t>(N) * MaxPool::out_size(H) * MaxPool::out_size(W) * C);
    dy.poison();
    pool.forward(*ctx, dy.data(), dx.data(), N, H, W, C);
    EXPECT_TRUE(close(dy.download(), ref::maxpool3x3s2(x, N, H, W, C), bound()));
  }
}

TEST_P(Resnet50LayerTest, GlobalAvgPool) {
  for (auto [N, H, W, C] : {std::tuple{1, 1, 1, 16}, {3, 7, 7, 200}, {2, 5, 3, 64}, {5, 7, 7, 2048}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " N=" << N << " H=" << H << " W=" << W << " C=" << C);
    GlobalAvgPool pool("avgpool", dtype());
    auto x = test::random_vec(static_cast<size_t>(N) * H * W * C, seed);
    for (float& v : x) v = std::fabs(v);  // post-ReLU activations: a mean far from zero
    DeviceArray dx(dtype(), x), dy(dtype(), static_cast<size_t>(N) * C);
    dy.poison();
    pool.forward(*ctx, dy.data(), dx.data(), N, H, W, C);
    EXPECT_TRUE(close(dy.download(), ref::global_avgpool(x, N, H, W, C), bound()));
  }
}

TEST_P(Resnet50LayerTest, Classifier) {
  for (auto [N, H, C, classes] : {std::tuple{3, 2, 64, 10}, {1, 1, 32, 7}, {5, 7, 2048, 1000}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " N=" << N << " H=W=" << H << " C=" << C
                                      << " classes=" << classes);
    HostWeights hw;
    const float b = 1.f / std::sqrt(float(C));
    WeightRng rng(seed);
    hw.add("fc.weight", {classes, C}, rng.uniform(int64_t{classes} * C, -b, b));
    hw.add("fc.bias", {classes}, rng.uniform(classes, -b, b));
    DeviceWeights w(*ctx, hw, dtype());
    Classifier head(w, C, classes, precision());
    head.prepare(*ctx, N);
    auto x = test::random_vec(static_cast<size_t>(N) * H * H * C, seed + 1);
    for (float& v : x) v = std::fabs(v);
    DeviceArray dx(dtype(), x), pooled(dtype(), static_cast<size_t>(N) * C),
        dy(dtype(), static_cast<size_t>(N) * classes);
    dy.poison();
    head.forward(*ctx, dy.data(), dx.data(), N, H, H, pooled.data());
    const auto want = ref::linear(ref::global_avgpool(x, N, H, H, C), hw.at("fc.weight").values,
                                  hw.at("fc.bias").values, N, C, classes);
    EXPECT_TRUE(close(dy.download(), want, bound()));
  }
}

TEST_P(Resnet50LayerTest, Bottleneck) {
  // N, H, W, in_channels, width, stride: identity shortcut, strided projection, and the
  // stride-1 projection of stage 1 (width change only).
  for (const ConvRoute route : kRoutes)
    for (auto [N, H, W, Cin, width, stride] :
         {std::tuple{2, 9, 13, 16, 4, 1}, {3, 15, 11, 24, 8, 2}, {1, 8, 8, 8, 8, 1}, {4, 14, 14, 256, 64, 1}}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " route " << conv_route_name(route) << " N=" << N
                                        << " H=" << H << " W=" << W << " in=" << Cin << " width=" << width
                                        << " stride=" << stride);
      const std::string q = "layer2.1";
      const int out = Bottleneck::kExpansion * width;
      WeightRng rng(seed);
      HostWeights raw, folded;
      add_conv_bn(&raw, &folded, q + ".conv1", q + ".conv1", q + ".bn1", {Cin, width, 1, 1, 0}, &rng);
      add_conv_bn(&raw, &folded, q + ".conv2", q + ".conv2", q + ".bn2", {width, width, 3, stride, 1}, &rng);
      add_conv_bn(&raw, &folded, q + ".conv3", q + ".conv3", q + ".bn3", {width, out, 1, 1, 0}, &rng);
      if (stride != 1 || Cin != out)
        add_conv_bn(&raw, &folded, q + ".downsample", q + ".downsample.0", q + ".downsample.1",
                    {Cin, out, 1, stride, 0}, &rng);
      const bool project = stride != 1 || Cin != out;
      HostWeights shortcut;  // the folded shortcut's [W3 | Wd], b3 + bd
      if (project) add_folded_shortcut_weights(shortcut, folded, q, Cin, width);
      DeviceWeights w(*ctx, folded, dtype()), ws(*ctx, shortcut, dtype());
      Bottleneck block(w, q, Cin, width, stride, precision());
      EXPECT_EQ(block.has_downsample(), project);
      if (project) block.offer_folded_shortcut(ws, precision());
      const int Ho = block.out_size(H), Wo = block.out_size(W);
      auto x = test::random_vec(static_cast<size_t>(N) * H * W * Cin, seed + 1);
      for (float& v : x) v = std::fabs(v);  // a block's input comes out of a ReLU
      DeviceArray dx(dtype(), x), dy(dtype(), static_cast<size_t>(N) * Ho * Wo * out);
      DeviceBuffer scratch(block.scratch_bytes(N, H, W));
      block.prepare(*ctx, N, H, W, dy.data(), dx.data(), scratch.data(), route);
      const std::vector<float> want = ref::bottleneck(x, raw, q, N, H, W, Cin, width, stride, 1e-5f);
      // With a downsample, both ways of the shortcut (the copy's vector path at width and in
      // multiples of 16 bytes, its element path at width 4 in bf16); else the one way.
      EXPECT_EQ(block.has_shortcut_way(N, H, W, ShortcutWay::Folded), project) << block.describe_shortcut(N, H, W);
      for (const ShortcutWay way : {ShortcutWay::Folded, ShortcutWay::Apart}) {
        if (!block.has_shortcut_way(N, H, W, way)) continue;
        SCOPED_TRACE(std::string("shortcut ") + shortcut_way_name(way));
        if (project) block.choose_shortcut(N, H, W, way);
        EXPECT_EQ(block.shortcut_way(N, H, W), way);
        dy.poison();
        block.forward(*ctx, dy.data(), dx.data(), N, H, W, scratch.data());
        EXPECT_TRUE(close(dy.download(), want, bound()));
      }
      if (project) {
        EXPECT_NE(block.describe_shortcut(N, H, W), "");
      }
    }
}

ResNetConfig tiny_config() {
  ResNetConfig c;
  c.layers = {1, 2, 1, 1};
  c.base_width = 8;
  c.num_classes = 10;
  c.image_size = 45;
  return c;
}

// The whole network on random weights vs the oracle, at B = 3 then 1; fp32's bound is 1e-4 for
// a model.
void expect_whole_model_matches(Context& ctx, ResNet50& model, const HostWeights& params, const ResNetConfig& c,
                                uint64_t seed, Precision precision, double bound) {
  const int S = c.image_size;
  model.prepare(ctx, 1);
  for (int B : {3, 1}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " S=" << S << " " << model.stem_variant());
    const auto images = test::random_vec(static_cast<size_t>(B) * S * S * 3, seed + B);  // NHWC
    model.upload_input(ctx, nhwc_to_nchw(images, B, S, S, 3), B);
    const size_t n = static_cast<size_t>(B) * c.num_classes;
    fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(n), ctx.stream());
    model.forward(ctx, B);
    const double b = precision == Precision::FP32 ? 1e-4 : bound;
    EXPECT_TRUE(close(test::download_f32(model.dtype(), model.logits(), n), ref::resnet50(images, params, c, B, S), b));
  }
}

// Both stems the default can take: Auto (the fused kernel in bf16, cuDNN's elsewhere) and cuDNN's.
TEST_P(Resnet50LayerTest, WholeModel) {
  const ResNetConfig c = tiny_config();
  const HostWeights params = random_resnet50_params(c, seed);
  const bool bf16 = precision() == Precision::BF16;
  for (StemKind stem : {StemKind::Auto, StemKind::Cudnn}) {
    ResNet50 model(*ctx, c, fold_resnet50_params(params, c), precision(), 3, c.image_size, stem);
    EXPECT_EQ(model.stem_kind(), bf16 && stem == StemKind::Auto ? StemKind::Fused : StemKind::Cudnn);
    EXPECT_EQ(model.stem_variant().find("refused"), std::string::npos) << model.stem_variant();  // Auto says nothing
    expect_whole_model_matches(*ctx, model, params, c, seed, precision(), bound());
  }
}

// StemKind::Fused asked for explicitly (width 8, image 45: conv side 23, pooled 12): in bf16 the
// fused kernel runs; in fp32 and tf32 the model falls back to the cuDNN stem and says why.
TEST_P(Resnet50LayerTest, WholeModelFusedStem) {
  const ResNetConfig c = tiny_config();
  const HostWeights params = random_resnet50_params(c, seed);
  ResNet50 model(*ctx, c, fold_resnet50_params(params, c), precision(), 3, c.image_size, StemKind::Fused);
  const bool bf16 = precision() == Precision::BF16;
  EXPECT_EQ(model.stem_kind(), bf16 ? StemKind::Fused : StemKind::Cudnn) << model.stem_variant();
  EXPECT_EQ(model.stem_variant().find("bf16 only") != std::string::npos, !bf16) << model.stem_variant();
  expect_whole_model_matches(*ctx, model, params, c, seed, precision(), bound());
}

// Bad requests are one sentence each, before any work is enqueued.
TEST_P(Resnet50LayerTest, BadInputIsRefused) {
  const ResNetConfig c = tiny_config();
  const HostWeights w = random_resnet50_weights(c, 1);
  auto expect_error = [](auto fn, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error([&] { ResNet50(*ctx, c, w, precision(), 0, c.image_size); }, "batch size must be at least 1");
  expect_error([&] { ResNet50(*ctx, c, w, precision(), 1, 31); }, "too small");
  ResNet50 model(*ctx, c, w, precision(), 2, c.image_size);
  expect_error([&] { model.forward(*ctx, 3); }, "outside [1, 2]");
  expect_error([&] { model.forward(*ctx, 1); }, "was not prepared");
  expect_error([&] { model.upload_input(*ctx, std::vector<float>(5), 2); }, "expected");
  // Weights of another config: the wrong channel counts are caught before any upload.
  ResNetConfig wider = c;
  wider.base_width = 16;
  expect_error([&] { ResNet50(*ctx, wider, w, precision(), 1, c.image_size); }, "weight 'conv1.weight' has shape");
}

// Informational: which route and engine each of ResNet-50's convolutions got at batch 8,
// 224x224, in this precision, and the build. Fails only if a convolution cannot run at all or
// the logits are not finite.
TEST_P(Resnet50LayerTest, FullSizeRoutes) {
  const ResNetConfig c = ResNetConfig::resnet50();
  ResNet50 model(*ctx, c, random_resnet50_weights(c, 0), precision(), 8, 224);
  const std::vector<std::string> lines = model.describe_convs(8);
  EXPECT_EQ(lines.size(), model.convs().size() + 1);  // one per convolution, then the build
  std::cout << precision_name(precision()) << ":\n";
  for (const std::string& l : lines) std::cout << "  " << l << "\n";
  model.upload_input(*ctx, test::random_vec(8 * 3 * 224 * 224, seed), 8);
  model.forward(*ctx, 8);
  const auto logits = test::download_f32(model.dtype(), model.logits(), 8 * 1000);
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, Resnet50LayerTest, ::testing::ValuesIn(kPrecisions),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

// --- against PyTorch's goldens (tests/golden/golden_resnet50.py; names: test_resnet50_reference.cpp)

class Resnet50Golden : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();  // before the fixtures are opened: no GPU is a skip, whatever else is missing
    file.emplace(SafeTensors::open(test::golden_path("resnet50_tiny.safetensors")));
    acts.emplace(SafeTensors::open(test::golden_path("resnet50_tiny_activations.safetensors")));
    ctx = std::make_unique<Context>();
    cfg = ResNetConfig::from_file(*file);
    host = load_resnet50_weights(*file, cfg);
    w = std::make_unique<DeviceWeights>(*ctx, host, dtype());
    B = static_cast<int>(acts->meta_int("B"));
    S = static_cast<int>(acts->meta_int("S"));
    blocks = ref::blocks(cfg, S);
  }
  Precision precision() const { return GetParam(); }
  DType dtype() const { return activation_dtype(GetParam()); }
  double bound() const { return test::layer_bound(GetParam()); }
  std::vector<float> golden(const std::string& n) const { return test::golden(*acts, n); }
  std::vector<float> block_input(size_t i) const {
    return golden(i == 0 ? "maxpool.out" : blocks[i - 1].prefix + ".out");
  }
  // Runs `conv` on golden input `x` (and residual), checks against golden `want`.
  void check_conv(Conv2d& conv, const std::vector<float>& x, int H, const std::vector<float>* residual,
                  const std::string& want) {
    SCOPED_TRACE(conv.name());
    const std::vector<float> ref = golden(want);
    DeviceArray dx(dtype(), x), dy(dtype(), ref.size());
    std::unique_ptr<DeviceArray> dz = residual ? std::make_unique<DeviceArray>(dtype(), *residual) : nullptr;
    conv.prepare(*ctx, B, H, H, dy.data(), dx.data(), dz ? dz->data() : nullptr);
    dy.poison();
    conv.forward(*ctx, dy.data(), dx.data(), B, H, H, dz ? dz->data() : nullptr);
    EXPECT_TRUE(close(dy.download(), ref, bound())) << "ran " << conv.describe(B, H, H);
  }

  std::optional<SafeTensors> file, acts;
  std::unique_ptr<Context> ctx;
  ResNetConfig cfg;
  HostWeights host;
  std::unique_ptr<DeviceWeights> w;
  int B = 0, S = 0;
  std::vector<ref::BlockSpec> blocks;
};

TEST_P(Resnet50Golden, StemAndMaxPool) {
  Conv2d stem(*w, "conv1", {3, cfg.base_width, 7, 2, 3}, ConvActivation::Relu, precision());
  check_conv(stem, golden("images"), S, nullptr, "conv1.out");
  const int s1 = stem.shape().out_size(S);
  MaxPool pool("maxpool", dtype());
  DeviceArray x(dtype(), golden("conv1.out")), y(dtype(), golden("maxpool.out").size());
  y.poison();
  pool.forward(*ctx, y.data(), x.data(), B, s1, s1, cfg.base_width);
  EXPECT_TRUE(close(y.download(), golden("maxpool.out"), bound()));
}

TEST_P(Resnet50Golden, BlockConvolutions) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const ref::BlockSpec& b = blocks[i];
    const std::string& q = b.prefix;
    const int out = Bottleneck::kExpansion * b.width;
    const auto x = block_input(i);
    Conv2d conv1(*w, q + ".conv1", {b.in_channels, b.width, 1, 1, 0}, ConvActivation::Relu, precision());
    check_conv(conv1, x, b.in_size, nullptr, q + ".conv1.out");
    Conv2d conv2(*w, q + ".conv2", {b.width, b.width, 3, b.stride, 1}, ConvActivation::Relu, precision());
    check_conv(conv2, golden(q + ".conv1.out"), b.in_size, nullptr, q + ".conv2.out");
    const bool project = acts->find(q + ".downsample.out") != nullptr;
    if (project) {
      Conv2d ds(*w, q + ".downsample", {b.in_channels, out, 1, b.stride, 0}, ConvActivation::None, precision());
      check_conv(ds, x, b.in_size, nullptr, q + ".downsample.out");
    }
    const std::vector<float> residual = project ? golden(q + ".downsample.out") : x;
    Conv2d conv3(*w, q + ".conv3", {b.width, out, 1, 1, 0}, ConvActivation::Relu, precision());
    check_conv(conv3, golden(q + ".conv2.out"), b.out_size, &residual, q + ".out");
  }
}

TEST_P(Resnet50Golden, Blocks) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const ref::BlockSpec& b = blocks[i];
    SCOPED_TRACE(b.prefix);
    Bottleneck block(*w, b.prefix, b.in_channels, b.width, b.stride, precision());
    HostWeights shortcut;
    if (block.has_downsample()) add_folded_shortcut_weights(shortcut, host, b.prefix, b.in_channels, b.width);
    DeviceWeights ws(*ctx, shortcut, dtype());
    if (block.has_downsample()) block.offer_folded_shortcut(ws, precision());
    DeviceArray x(dtype(), block_input(i)), y(dtype(), golden(b.prefix + ".out").size());
    DeviceBuffer scratch(block.scratch_bytes(B, b.in_size, b.in_size));
    block.prepare(*ctx, B, b.in_size, b.in_size, y.data(), x.data(), scratch.data());
    EXPECT_EQ(block.has_shortcut_way(B, b.in_size, b.in_size, ShortcutWay::Folded), block.has_downsample());
    for (const ShortcutWay way : {ShortcutWay::Folded, ShortcutWay::Apart}) {
      if (!block.has_shortcut_way(B, b.in_size, b.in_size, way)) continue;
      SCOPED_TRACE(std::string("shortcut ") + shortcut_way_name(way));
      if (block.has_downsample()) block.choose_shortcut(B, b.in_size, b.in_size, way);
      y.poison();
      block.forward(*ctx, y.data(), x.data(), B, b.in_size, b.in_size, scratch.data());
      EXPECT_TRUE(close(y.download(), golden(b.prefix + ".out"), bound()));
    }
  }
}

TEST_P(Resnet50Golden, Head) {
  const ref::BlockSpec& last = blocks.back();
  Classifier head(*w, cfg.features(), cfg.num_classes, precision());
  head.prepare(*ctx, B);
  DeviceArray x(dtype(), golden(last.prefix + ".out")), pooled(dtype(), golden("avgpool.out").size()),
      y(dtype(), golden("logits").size());
  pooled.poison();
  y.poison();
  head.forward(*ctx, y.data(), x.data(), B, last.out_size, last.out_size, pooled.data());
  EXPECT_TRUE(close(pooled.download(), golden("avgpool.out"), bound()));
  EXPECT_TRUE(close(y.download(), golden("logits"), bound()));
}

TEST_P(Resnet50Golden, WholeModelLogits) {
  ResNet50 model(*ctx, cfg, host, precision(), B, S);
  model.upload_input(*ctx, nhwc_to_nchw(golden("images"), B, S, S, 3), B);
  const size_t n = static_cast<size_t>(B) * cfg.num_classes;
  fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(n), ctx->stream());
  model.forward(*ctx, B);
  const double b = precision() == Precision::FP32 ? 1e-4 : bound();
  EXPECT_TRUE(close(test::download_f32(model.dtype(), model.logits(), n), golden("logits"), b));
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, Resnet50Golden, ::testing::ValuesIn(kPrecisions),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

}  // namespace
}  // namespace laptime
