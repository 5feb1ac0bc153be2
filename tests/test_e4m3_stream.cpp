// fp8 ResNet-50's e4m3 stream (layers/resnet50/e4m3_block.h) on the GPU: its kernels against the host (the
// stride-2 gather, the average pool over e4m3, CUTLASS's fp8 convolutions), two chained blocks against the recipe
// emulated on the host from the same e4m3 input, weights and calibrated scales, and the whole tiny
// model eager against its own CUDA Graph replay. Fresh random data each run (the seed is printed),
// outputs poisoned. Skips without a GPU, where fp8 cannot run, and where the stream cannot (no
// CUTLASS residual-stream kernels in the build, or a GPU other than compute capability 9.0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "core/timing.h"
#include "kernels/convert.cuh"
#include "kernels/fp8.cuh"
#include "kernels/pooling.cuh"
#include "layers/resnet50/bottleneck.h"
#include "layers/cutlass/cutlass_conv.h"
#include "layers/resnet50/e4m3_block.h"
#include "layers/resnet50/fused_stem.h"
#include "models/resnet50.h"
#include "tests/reference/fp8_ref.h"
#include "tests/reference/gpt2_ref.h"
#include "tests/support/compare.h"

namespace laptime {
namespace {

using test::close;
using test::DeviceArray;
using test::download_bytes;
using test::upload_bytes;
using Vec = std::vector<float>;

class E4m3StreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    ctx = std::make_unique<Context>();
    std::string why = fp8_refusal(*ctx);
    if (why.empty()) why = e4m3_stream_refusal(*ctx);
    if (!why.empty()) GTEST_SKIP() << why;
    seed = test::fresh_seed();
  }
  std::unique_ptr<Context> ctx;
  uint64_t seed = 0;
};

Vec bf16(Vec v) {
  for (float& x : v) x = ref::round_bf16(x);
  return v;
}

// y [N, Ho, Wo, K] = x [N, H, W, C] ⋆ w [K, R, R, C] (KRSC, as the device holds a folded weight),
// zero padding, summed in double, + bias.
Vec conv_krsc(const Vec& x, const Vec& w, const Vec& bias, int N, int H, int W, int C, int K, int R, int stride,
              int pad) {
  const int Ho = (H + 2 * pad - R) / stride + 1, Wo = (W + 2 * pad - R) / stride + 1;
  Vec y(size_t(N) * Ho * Wo * K);
  for (int n = 0; n < N; ++n)
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo)
        for (int k = 0; k < K; ++k) {
          double acc = 0;
          for (int r = 0; r < R; ++r)
            for (int q = 0; q < R; ++q) {
              const int h = ho * stride - pad + r, ww = wo * stride - pad + q;
              if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
              const float* xp = &x[((size_t(n) * H + h) * W + ww) * C];
              const float* wp = &w[((size_t(k) * R + r) * R + q) * C];
              for (int c = 0; c < C; ++c) acc += double(xp[c]) * wp[c];
            }
          y[((size_t(n) * Ho + ho) * Wo + wo) * K + k] = static_cast<float>(acc + bias[k]);
        }
  return y;
}

// An fp8 weight as the device makes it (layers/fp8_weight.h): s_w = amax(bf16 W) / 448, W8 =
// e4m3(bf16 W · (1 / s_w)); returned dequantized, s_w · W8.
Vec fp8_weight(const Vec& w) {
  float amax = 0.f;
  for (float v : w) amax = std::max(amax, std::fabs(ref::round_bf16(v)));
  const float s = amax / 448.f, inv = 1.f / s;
  Vec q(w.size());
  for (size_t i = 0; i < w.size(); ++i) q[i] = s * ref::round_e4m3(ref::round_bf16(w[i]) * inv);
  return q;
}

Vec quantize(const Vec& v, float s) {  // e4m3(v · (1 / s)), as values
  Vec q(v.size());
  const float inv = 1.f / s;
  for (size_t i = 0; i < v.size(); ++i) q[i] = ref::round_e4m3(v[i] * inv);
  return q;
}

Vec e4m3_values(const std::vector<uint8_t>& bits) {
  Vec v(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) v[i] = ref::e4m3_value(bits[i]);
  return v;
}

// The gather a stride-2 downsample reads, both paths (16 bytes a thread: C = 48; a byte: C = 5),
// an odd side (H = 7: Ho = 4), bit for bit.
TEST_F(E4m3StreamTest, SubsampleGathersEveryStridethPixel) {
  for (int C : {48, 5}) {
    const int N = 2, H = 7, W = 5, s = 2, Ho = 4, Wo = 3;
    std::vector<uint8_t> x(size_t(N) * H * W * C);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 7);
    const DeviceBuffer dx = upload_bytes(x);
    DeviceBuffer dy(size_t(N) * Ho * Wo * C);
    CUDA_CHECK(cudaMemset(dy.data(), 0x7f, dy.bytes()));
    subsample_bytes(dy.data(), dx.data(), N, H, W, C, s, ctx->stream());
    const std::vector<uint8_t> got = download_bytes(dy.data(), dy.bytes());
    for (int n = 0; n < N; ++n)
      for (int ho = 0; ho < Ho; ++ho)
        for (int wo = 0; wo < Wo; ++wo)
          for (int c = 0; c < C; ++c)
            ASSERT_EQ(got[((size_t(n) * Ho + ho) * Wo + wo) * C + c],
                      x[((size_t(n) * H + ho * s) * W + wo * s) * C + c])
                << "C=" << C << " n=" << n << " ho=" << ho << " wo=" << wo << " c=" << c;
  }
}

// Every CUTLASS implicit-GEMM convolution of the build (conv2 on the stream) against the host: e4m3
// x and w with scales that are not 1, the bias, ReLU, · d_scale, rounded to e4m3; a 3×3 stride-1
// and a stride-2 shape whose output is no multiple of any tile. The bound as test_cutlass_gemm's
// for an e4m3 D: the device's fp32 sums and the host's double ones may round an element near a
// boundary apart, one e4m3 unit (2^-3) in a few elements; 2^-6 allows one in 64.
TEST_F(E4m3StreamTest, EachConvolutionKernelMatchesTheHost) {
  struct Shape {
    int N, H, W, C, K, stride;
  };
  const float s_a = 0.5f, s_b = 0.125f, d_scale = 8.f;
  const float h_scales[12] = {s_a, 0, 0, 0, s_b, 0, 0, 0, d_scale, 0, 0, 0};
  DeviceBuffer scales(sizeof h_scales);
  CUDA_CHECK(cudaMemcpy(scales.data(), h_scales, sizeof h_scales, cudaMemcpyHostToDevice));
  for (const CutlassConvKernel* k : cutlass_built_conv_kernels()) {
    for (const Shape& sh : {Shape{2, 9, 9, 32, 48, 1}, Shape{3, 8, 8, 64, 64, 2}}) {
      SCOPED_TRACE(::testing::Message() << k->name() << " N=" << sh.N << " H=" << sh.H << " C=" << sh.C << " K=" << sh.K
                                        << " stride " << sh.stride << " seed " << seed);
      const int Ho = (sh.H + 2 - 3) / sh.stride + 1, Wo = (sh.W + 2 - 3) / sh.stride + 1;
      Vec x = test::random_vec(size_t(sh.N) * sh.H * sh.W * sh.C, seed, 4.f),
          w = test::random_vec(size_t(sh.K) * 9 * sh.C, seed + 1, 4.f);
      for (float& v : x) v = ref::round_e4m3(v);
      for (float& v : w) v = ref::round_e4m3(v);
      const Vec bias = bf16(test::random_vec(sh.K, seed + 2, 0.5f));
      Vec xs(x.size()), ws(w.size());
      for (size_t i = 0; i < x.size(); ++i) xs[i] = s_a * x[i];
      for (size_t i = 0; i < w.size(); ++i) ws[i] = s_b * w[i];
      Vec want = conv_krsc(xs, ws, bias, sh.N, sh.H, sh.W, sh.C, sh.K, 3, sh.stride, 1);
      for (float& v : want) v = ref::round_e4m3(std::max(v, 0.f) * d_scale);
      auto bits = [](const Vec& v) {
        std::vector<uint8_t> b(v.size());
        for (size_t i = 0; i < v.size(); ++i) b[i] = ref::e4m3_bits(v[i]);
        return b;
      };
      const DeviceBuffer dx = upload_bytes(bits(x)), dw = upload_bytes(bits(w));
      const DeviceArray db(DType::BF16, bias);
      DeviceBuffer dy(size_t(sh.N) * Ho * Wo * sh.K);
      CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));
      CUDA_CHECK(cudaDeviceSynchronize());
      CutlassConvArgs a;
      a.N = sh.N;
      a.H = sh.H;
      a.W = sh.W;
      a.C = sh.C;
      a.K = sh.K;
      a.R = 3;
      a.stride = sh.stride;
      a.pad = 1;
      a.x = dx.data();
      a.w = dw.data();
      a.y = dy.data();
      a.bias = db.data();
      a.a_scale = scales.as<float>();
      a.b_scale = scales.as<float>() + 4;
      a.d_scale = scales.as<float>() + 8;
      ASSERT_EQ(k->refusal(a), "");
      CutlassLaunchCache launch;
      k->run(a, launch, ctx->workspace(), ctx->workspace_bytes(), ctx->stream());
      CUDA_CHECK(cudaStreamSynchronize(ctx->stream()));
      EXPECT_TRUE(close(e4m3_values(download_bytes(dy.data(), dy.bytes())), want, 0x1p-6));
    }
  }
}

// The head's pool on the e4m3 stream: s · mean of the e4m3 values, one bf16 rounding.
TEST_F(E4m3StreamTest, AveragePoolReadsE4m3WithItsScale) {
  const int N = 3, H = 7, W = 7, C = 40;
  const Vec v = test::random_vec(size_t(N) * H * W * C, seed, 2.f);
  std::vector<uint8_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = ref::e4m3_bits(v[i]);
  const DeviceBuffer dx = upload_bytes(bits);
  const float s = 0.37f;
  DeviceBuffer ds(sizeof(float));
  CUDA_CHECK(cudaMemcpy(ds.data(), &s, sizeof s, cudaMemcpyHostToDevice));
  DeviceArray dy(DType::BF16, size_t(N) * C);
  dy.poison();
  CUDA_CHECK(cudaDeviceSynchronize());
  global_avgpool_e4m3_forward(dy.data(), dx.data(), ds.as<float>(), N, H, W, C, ctx->stream());
  Vec want(size_t(N) * C);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      double sum = 0;
      for (int p = 0; p < H * W; ++p) sum += ref::e4m3_value(bits[(size_t(n) * H * W + p) * C + c]);
      want[size_t(n) * C + c] = static_cast<float>(s * sum / (H * W));
    }
  EXPECT_TRUE(close(dy.download(), want, 0x1p-8));
}

struct BlockWeights {
  int in = 0, width = 0, stride = 1;
  Vec w1, b1, w2, b2, w3, b3, wd, bd;  // KRSC
  bool downsample() const { return stride != 1 || in != 4 * width; }
};

BlockWeights block_weights(int in, int width, int stride, uint64_t seed) {
  BlockWeights b;
  b.in = in;
  b.width = width;
  b.stride = stride;
  const int out = 4 * width;
  auto he = [](int fan_in) { return std::sqrt(2.f / fan_in); };
  b.w1 = test::random_vec(size_t(width) * in, seed + 1, he(in));
  b.b1 = test::random_vec(width, seed + 2, 0.1f);
  b.w2 = test::random_vec(size_t(width) * 9 * width, seed + 3, he(9 * width));
  b.b2 = test::random_vec(width, seed + 4, 0.1f);
  b.w3 = test::random_vec(size_t(out) * width, seed + 5, he(width));
  b.b3 = test::random_vec(out, seed + 6, 0.1f);
  if (b.downsample()) {
    b.wd = test::random_vec(size_t(out) * in, seed + 7, he(in));
    b.bd = test::random_vec(out, seed + 8, 0.1f);
  }
  return b;
}

void add_block(HostWeights& hw, const std::string& p, const BlockWeights& b) {
  const int out = 4 * b.width;
  hw.add(p + ".conv1.weight", {b.width, 1, 1, b.in}, b.w1);
  hw.add(p + ".conv1.bias", {b.width}, b.b1);
  hw.add(p + ".conv2.weight", {b.width, 3, 3, b.width}, b.w2);
  hw.add(p + ".conv2.bias", {b.width}, b.b2);
  hw.add(p + ".conv3.weight", {out, 1, 1, b.width}, b.w3);
  hw.add(p + ".conv3.bias", {out}, b.b3);
  if (b.downsample()) {
    hw.add(p + ".downsample.weight", {out, 1, 1, b.in}, b.wd);
    hw.add(p + ".downsample.bias", {out}, b.bd);
  }
}

// The stream's recipe on the host (layers/resnet50/e4m3_block.h), from the input's e4m3 values xq (real
// value s_x · xq) and the device's calibrated scales: every intermediate tensor rounded to e4m3
// with its scale, e4m3 weights, sums in double. Returns y's e4m3 values.
struct BlockScales {
  float x, t1, t2, sc, y;
};
Vec emulate_block(const BlockWeights& b, const Vec& xq, const BlockScales& s, int N, int H, int W) {
  const int out = 4 * b.width, Ho = (H - 1) / b.stride + 1, Wo = (W - 1) / b.stride + 1;
  auto real = [](const Vec& q, float scale) {
    Vec v(q.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = scale * q[i];
    return v;
  };
  auto relu = [](Vec v) {
    for (float& e : v) e = std::max(e, 0.f);
    return v;
  };
  const Vec x = real(xq, s.x);
  const Vec t1 =
      real(quantize(relu(conv_krsc(x, fp8_weight(b.w1), bf16(b.b1), N, H, W, b.in, b.width, 1, 1, 0)), s.t1), s.t1);
  const Vec t2 =
      real(quantize(relu(conv_krsc(t1, fp8_weight(b.w2), bf16(b.b2), N, H, W, b.width, b.width, 3, b.stride, 1)), s.t2),
           s.t2);
  Vec r = x;  // the identity: s_x · xq
  if (b.downsample())
    r = real(quantize(conv_krsc(x, fp8_weight(b.wd), bf16(b.bd), N, H, W, b.in, out, 1, b.stride, 0), s.sc), s.sc);
  Vec z = conv_krsc(t2, fp8_weight(b.w3), bf16(b.b3), N, Ho, Wo, b.width, out, 1, 1, 0);
  for (size_t i = 0; i < z.size(); ++i) z[i] = std::max(z[i] + r[i], 0.f);
  return quantize(z, s.y);
}

// Two chained blocks, layer2.0's kind (a stride-2 downsample) then an identity block fed the
// first's e4m3 output and scale, against emulate_block. The bound: the device sums in fp32 in its
// own order and the host in double, so a value near a rounding boundary (of t1, t2, the shortcut
// or y, each e4m3) may round the other way, one unit of e4m3 (2^-3 relative), and a flipped t1 or t2
// moves the sums after it a little (fast accumulation's partial sums round more often than fp32's,
// which makes such flips likelier, still rare); 2^-5 allows a flip in one element in 16 of y, and
// a wrong scale, weight, bias or residual is off by far more (a scale off by 2 is a 2^-1 error).
TEST_F(E4m3StreamTest, TwoBlocksMatchTheRecipe) {
  const int N = 2, H = 8, W = 8;
  const BlockWeights ba = block_weights(64, 32, 2, seed), bb = block_weights(128, 32, 1, seed + 100);
  HostWeights hw;
  add_block(hw, "a", ba);
  add_block(hw, "b", bb);
  DeviceWeights w(*ctx, hw, DType::BF16);
  Bottleneck a(w, "a", 64, 32, 2, Precision::FP8), b(w, "b", 128, 32, 1, Precision::FP8);
  a.use_e4m3_stream(*ctx);
  b.use_e4m3_stream(*ctx);
  ASSERT_TRUE(a.has_downsample());
  ASSERT_FALSE(b.has_downsample());
  const int Ho = 4, Wo = 4, out = 128;

  // The input: bf16 values, its scale calibrated on them, e4m3 as the stem's quantize writes it.
  const Vec x = bf16(test::random_vec(size_t(N) * H * W * 64, seed + 7, 1.5f));
  DeviceArray dx(DType::BF16, x);
  Fp8Scale s_x;
  s_x.make(*ctx, "the test's input");
  s_x.begin_calibration(*ctx);
  s_x.record(*ctx, dx.data(), DType::BF16, static_cast<int64_t>(x.size()));
  s_x.end_calibration(*ctx, kFp8ActivationMargin);
  DeviceBuffer x8(x.size());
  quantize_fp8(x8.data(), s_x.inv_scale(), DType::BF16, dx.data(), static_cast<int64_t>(x.size()), ctx->stream());

  DeviceArray ya(DType::BF16, size_t(N) * Ho * Wo * out), yb(DType::BF16, size_t(N) * Ho * Wo * out);
  DeviceBuffer sa(a.scratch_bytes(N, H, W)), sb(b.scratch_bytes(N, Ho, Wo));
  ConvPlanCache cache;
  a.prepare(*ctx, N, H, W, ya.data(), dx.data(), sa.data(), ConvRoute::Auto, &cache, s_x.scale());
  const float* s_a = a.e4m3().output_scale().scale();
  b.prepare(*ctx, N, Ho, Wo, yb.data(), ya.data(), sb.data(), ConvRoute::Auto, &cache, s_a);
  // Calibration: the bf16 pass, as ResNet50::calibrate runs it.
  a.begin_calibration(*ctx);
  b.begin_calibration(*ctx);
  a.forward(*ctx, ya.data(), dx.data(), N, H, W, sa.data());
  b.forward(*ctx, yb.data(), ya.data(), N, Ho, Wo, sb.data());
  a.end_calibration(*ctx);
  b.end_calibration(*ctx);

  // The stream: x8 -> a -> ya8 -> b -> yb8, outputs poisoned (0xff: NaN in e4m3).
  const size_t n_out = size_t(N) * Ho * Wo * out;
  CUDA_CHECK(cudaMemsetAsync(ya.data(), 0xff, n_out, ctx->stream()));
  CUDA_CHECK(cudaMemsetAsync(yb.data(), 0xff, n_out, ctx->stream()));
  a.forward_e4m3(*ctx, ya.data(), x8.data(), s_x.scale(), N, H, W, sa.data());
  b.forward_e4m3(*ctx, yb.data(), ya.data(), s_a, N, Ho, Wo, sb.data());
  const Vec ya8 = e4m3_values(download_bytes(ya.data(), n_out)), yb8 = e4m3_values(download_bytes(yb.data(), n_out));

  auto scales = [&](const Bottleneck& blk, float x_scale) {
    const E4m3Block& e = blk.e4m3();
    return BlockScales{x_scale, e.t1_scale().value(*ctx), e.t2_scale().value(*ctx),
                       blk.has_downsample() ? e.shortcut_scale().value(*ctx) : 1.f, e.output_scale().value(*ctx)};
  };
  const BlockScales sa_ = scales(a, s_x.value(*ctx)), sb_ = scales(b, sa_.y);
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " s_x " << sa_.x << " s_t1 " << sa_.t1 << " s_t2 " << sa_.t2
                                    << " s_sc " << sa_.sc << " s_a " << sa_.y << " s_b " << sb_.y);
  const Vec xq = quantize(x, sa_.x);
  EXPECT_TRUE(close(ya8, emulate_block(ba, xq, sa_, N, H, W), 0x1p-5)) << "block a (stride-2 downsample)";
  // Block b from the device's own ya8, so that each block is held to its own error alone.
  EXPECT_TRUE(close(yb8, emulate_block(bb, ya8, sb_, N, Ho, Wo), 0x1p-5)) << "block b (identity)";

  // What it says and what it counts: CUTLASS on conv2 and conv3, 1-byte tensors on the stream.
  const std::vector<std::string> lines = a.e4m3().describe(N, H, W);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[1].find("CUTLASS"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("CUTLASS"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("subsampled"), std::string::npos) << lines[3];
  std::vector<LayerCost> costs;
  a.append_costs(costs, "", N, H, W);
  ASSERT_EQ(costs.size(), 5u);  // a, conv1, conv2, conv3, downsample
  EXPECT_EQ(costs[1].precision, "fp8");
  EXPECT_EQ(costs[1].input_bytes, double(N) * H * W * 64);            // x8, 1 byte
  EXPECT_EQ(costs[3].output_bytes, double(n_out));                    // y8, 1 byte
  EXPECT_EQ(costs[3].input_bytes, double(N) * Ho * Wo * 32 + n_out);  // t2 and the residual, e4m3
  for (size_t i = 1; i < costs.size(); ++i) EXPECT_EQ(costs[i].precision, "fp8") << costs[i].name;
}

// The whole tiny ResNet on the stream: the e4m3 plan lines, the quantize range among the costs,
// finite logits that a CUDA Graph replay reproduces bit for bit (nothing in the forward depends on
// the host between launches).
TEST_F(E4m3StreamTest, ResNet50RunsEagerAndInAGraphAlike) {
  ResNetConfig c;
  c.layers = {1, 2, 1, 1};
  c.base_width = 16;
  c.num_classes = 10;
  c.image_size = 64;
  const HostWeights weights = random_resnet50_weights(c, seed);
  const int B = 2, S = c.image_size;
  ResNet50 model(*ctx, c, weights, Precision::FP8, B, S);
  ASSERT_TRUE(model.e4m3_stream()) << model.e4m3_stream_refusal();
  model.upload_input(*ctx, test::random_vec(size_t(B) * 3 * S * S, seed + 1), B);
  model.calibrate(*ctx, B);
  model.upload_input(*ctx, test::random_vec(size_t(B) * 3 * S * S, seed + 2), B);
  const int64_t n = int64_t{B} * c.num_classes;
  fill_nan(model.dtype(), model.logits(), n, ctx->stream());
  model.forward(*ctx, B);
  const Vec eager = model.logits_to_host(*ctx, B);
  for (float v : eager) ASSERT_TRUE(std::isfinite(v));
  fill_nan(model.dtype(), model.logits(), n, ctx->stream());
  CudaGraph graph;
  graph.capture(ctx->stream(), [&] { model.forward(*ctx, B); });
  graph.launch(ctx->stream());
  const Vec graphed = model.logits_to_host(*ctx, B);
  EXPECT_EQ(std::memcmp(graphed.data(), eager.data(), eager.size() * sizeof(float)), 0);

  int stream_lines = 0;
  for (const std::string& line : model.describe_convs(B)) stream_lines += line.find("e4m3 stream") != std::string::npos;
  EXPECT_EQ(stream_lines, 3 * 5 + 4);  // every block's conv1, conv2 and conv3, and the 4 downsamples
  bool quantize = false;  // the cuDNN stem's output is quantized by a pass of its own; the fused one writes e4m3
  for (const LayerCost& l : model.layer_costs(B)) quantize = quantize || l.name == "quantize";
  EXPECT_EQ(quantize, model.stem_kind() == StemKind::Cudnn) << model.stem_variant();
}

// The fused stem's e4m3 output (the stream's first tensor) is, bit for bit, what the quantize
// pass writes from its own bf16 output with the same scale: the same bf16 maxima, one rounding.
TEST_F(E4m3StreamTest, TheFusedStemWritesWhatTheQuantizePassWould) {
  const int N = 3, Hs = 35, C = 64, Po = pool_out_size(Hs - 3, 3, 2, 1);
  HostWeights hw;
  hw.add("conv1.weight", {C, 4, 4, 16}, test::random_vec(size_t(C) * 256, seed, 0.2f));
  hw.add("conv1.bias", {C}, test::random_vec(C, seed + 1, 0.1f));
  DeviceWeights w(*ctx, hw, DType::BF16);
  FusedStem stem(w, "conv1", C);
  stem.prepare(*ctx, N, Hs);
  const DeviceArray x(DType::BF16, test::random_vec(size_t(N) * Hs * Hs * 16, seed + 2));
  const size_t n = size_t(N) * Po * Po * C;
  DeviceArray y(DType::BF16, n);
  y.poison();
  stem.forward(*ctx, y.data(), x.data(), N, Hs);
  Fp8Scale s;
  s.make(*ctx, "the stem's output");
  s.begin_calibration(*ctx);
  s.record(*ctx, y.data(), DType::BF16, static_cast<int64_t>(n));
  s.end_calibration(*ctx, kFp8ActivationMargin);
  DeviceBuffer want(n), got(n);
  CUDA_CHECK(cudaMemsetAsync(got.data(), 0xff, n, ctx->stream()));
  quantize_fp8(want.data(), s.inv_scale(), DType::BF16, y.data(), static_cast<int64_t>(n), ctx->stream());
  stem.forward(*ctx, got.data(), x.data(), N, Hs, s.inv_scale());
  const std::vector<uint8_t> a = download_bytes(want.data(), n), b = download_bytes(got.data(), n);
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += a[i] != b[i];
  EXPECT_EQ(differ, 0u) << "of " << n << " (seed " << seed << ")";
}

}  // namespace
}  // namespace laptime
