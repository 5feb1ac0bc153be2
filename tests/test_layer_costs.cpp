// The layer costs: each layer's FLOPs and bytes, as the layers publish them (layers/layer_cost.h)
// and as the bench writes them down (bench/layer_costs.h, read back by trace/analyses/roofline).
//
// On the host: the formulas every layer uses against counts made by hand, and the sidecar's
// writer against the committed sidecars. On a GPU: the built models' costs against hand counts
// and published totals, and, byte for byte, against the sidecars the bench wrote for those
// runs before the layers published their own (results/2026-11-30-run3-*, tests/fixtures/nsys).
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/gpu_cli.h"
#include "cli/host_cli.h"
#include "bench/layer_costs.h"
#include "core/check.h"
#include "core/context.h"
#include "core/env_switches.h"
#include "layers/resnet50/conv2d.h"
#include "layers/layer_cost.h"
#include "models/gpt2.h"
#include "models/resnet50.h"
#include "trace/read/sidecars.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

std::map<std::string, LayerCost> by_name(const std::vector<LayerCost>& v) {
  std::map<std::string, LayerCost> m;
  for (const LayerCost& c : v) m[c.name] = c;
  return m;
}

// In the checkout: $LAPTIME_SOURCE_DIR when set (a build carried to a GPU machine).
std::string source_path(const std::string& rel) { return test::source_dir() + "/" + rel; }

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Precision precision_named(const std::string& s) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16})
    if (s == precision_name(p)) return p;
  throw Error("no precision '" + s + "'");
}

// ---- the formulas (host) ----

// c_attn of GPT-2 small at B=2, T=5 (N = 10 tokens, C = 768), bf16 (2 bytes), counted by hand:
// 2·10·768·2304 FLOPs; weights (2304·768 + 2304)·2; x 10·768·2; qkv 10·2304·2.
TEST(LayerCosts, GemmCostMatchesAHandCount) {
  const LayerCost c = gemm_cost("h.3.attn.c_attn", "h.3.attn", 10, 768, 2304, 2, 2, true, false);
  EXPECT_EQ(c.name, "h.3.attn.c_attn");
  EXPECT_EQ(c.parent, "h.3.attn");
  EXPECT_EQ(c.kind, "gemm");
  EXPECT_EQ(c.flops, 35389440.0);
  EXPECT_EQ(c.weight_bytes, 3543552.0);
  EXPECT_EQ(c.input_bytes, 15360.0);
  EXPECT_EQ(c.output_bytes, 46080.0);
  // fp32 doubles every byte and no FLOP.
  const LayerCost f = gemm_cost("c", "", 10, 768, 2304, 4, 4, true, false);
  EXPECT_EQ(f.weight_bytes, 2 * 3543552.0);
  EXPECT_EQ(f.flops, 35389440.0);
  // A product accumulating into its output (c_proj += the residual stream) reads it too.
  EXPECT_EQ(gemm_cost("c", "", 10, 768, 768, 2, 2, true, true).input_bytes, 30720.0);
  // fp16 operands, fp32 output, bias and residual (tf32's c_proj around its fp16 core).
  const LayerCost m = gemm_cost("c", "", 10, 768, 768, 2, 4, true, true);
  EXPECT_EQ(m.weight_bytes, 768.0 * 768 * 2 + 768 * 4);
  EXPECT_EQ(m.input_bytes, 10.0 * 768 * 2 + 10.0 * 768 * 4);
  EXPECT_EQ(m.output_bytes, 10.0 * 768 * 4);
}

// A 3×3 stride-2 convolution, layer2.0.conv2 of ResNet-50 at B=2: 56×56×128 -> 28×28×128.
TEST(LayerCosts, Resnet3x3ConvMatchesAHandCount) {
  const ConvShape s{128, 128, 3, 2, 1};
  const LayerCost c = conv_cost("layer2.0.conv2", "layer2.0", s, 2, 56, 56, false, DType::BF16);
  EXPECT_EQ(c.parent, "layer2.0");
  EXPECT_EQ(c.kind, "conv");
  EXPECT_EQ(c.flops, 462422016.0);      // 2·2·28·28·128·128·9
  EXPECT_EQ(c.weight_bytes, 295168.0);  // (128·9·128 + 128)·2
  EXPECT_EQ(c.input_bytes, 1605632.0);  // 2·56·56·128·2
  EXPECT_EQ(c.output_bytes, 401408.0);  // 2·28·28·128·2
  EXPECT_EQ(conv_cost("c", "", s, 2, 56, 56, false, DType::F32).weight_bytes, 590336.0);
  // With a residual, the shortcut is read too.
  EXPECT_EQ(conv_cost("c", "", s, 2, 56, 56, true, DType::BF16).input_bytes, 1605632.0 + 401408.0);
}

// A 1×1 stride-2 downsample reads one input pixel in four: layer2.0.downsample at B=2,
// 56×56×256 -> 28×28×512. (Counting the whole input put this layer at 135% of the copy
// bandwidth on the H200.)
TEST(LayerCosts, StridedOneByOneReadsOnlyThePixelsItsWindowsTouch) {
  const LayerCost c =
      conv_cost("layer2.0.downsample", "layer2.0", ConvShape{256, 512, 1, 2, 0}, 2, 56, 56, false, DType::BF16);
  EXPECT_EQ(c.flops, 411041792.0);       // 2·2·28·28·512·256
  EXPECT_EQ(c.weight_bytes, 263168.0);   // (512·256 + 512)·2
  EXPECT_EQ(c.input_bytes, 802816.0);    // 2·28·28·256·2
  EXPECT_EQ(c.output_bytes, 1605632.0);  // 2·28·28·512·2
}

// A composite is the sum of its parts, nested ones first; the FLOPs of a forward count leaves.
TEST(LayerCosts, CompositesSumTheirPartsAndTotalsCountLeaves) {
  std::vector<LayerCost> v{composite_cost("b", ""),
                           gemm_cost("b.x", "b", 1, 2, 3, 2, 2, false, false),
                           composite_cost("b.s", "b"),
                           gemm_cost("b.s.y", "b.s", 1, 4, 5, 2, 2, true, false),
                           streaming_cost("b.s.z", "b.s", "norm", 7, 7, 2, 2),
                           gemm_cost("top", "", 1, 1, 1, 2, 2, false, false)};
  sum_composites(v);
  const auto m = by_name(v);
  EXPECT_EQ(m.at("b.s").flops, 40.0);
  EXPECT_EQ(m.at("b.s").bytes(), m.at("b.s.y").bytes() + m.at("b.s.z").bytes());
  EXPECT_EQ(m.at("b").flops, 12.0 + 40.0);
  EXPECT_EQ(m.at("b").bytes(), m.at("b.x").bytes() + m.at("b.s").bytes());
  EXPECT_EQ(total_flops(v), 12.0 + 40.0 + 2.0);
  std::vector<LayerCost> orphan{gemm_cost("a", "nowhere", 1, 1, 1, 2, 2, false, false)};
  EXPECT_THROW(sum_composites(orphan), Error);
}

// The sidecar as the bench writes it, read back by trace/ (no bench headers there).
TEST(LayerCosts, SidecarRoundTripsThroughTheTraceReader) {
  std::vector<LayerCost> v{composite_cost("h.0", ""), gemm_cost("h.0.c_fc", "h.0", 10, 768, 3072, 2, 2, true, false),
                           streaming_cost("h.0.gelu", "h.0", "elementwise", 30720, 30720, 0, 2)};
  v[1].precision = "fp16";
  sum_composites(v);
  const std::string path = testing::TempDir() + "roof_sidecar.layers.json";
  write_layer_costs(path, layer_costs_json("gpt2", Precision::BF16, "B=2 T=5 (10 tokens)", v));
  const trace::LayerCosts back = trace::read_layer_costs(path);
  EXPECT_EQ(back.model, "gpt2");
  EXPECT_EQ(back.precision, "bf16");
  EXPECT_EQ(back.shape, "B=2 T=5 (10 tokens)");
  ASSERT_EQ(back.layers.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    SCOPED_TRACE(v[i].name);
    EXPECT_EQ(back.layers[i].name, v[i].name);
    EXPECT_EQ(back.layers[i].parent, v[i].parent);
    EXPECT_EQ(back.layers[i].kind, v[i].kind);
    EXPECT_EQ(back.layers[i].flops, v[i].flops);
    EXPECT_EQ(back.layers[i].weight_bytes, v[i].weight_bytes);
    EXPECT_EQ(back.layers[i].input_bytes, v[i].input_bytes);
    EXPECT_EQ(back.layers[i].output_bytes, v[i].output_bytes);
  }
  EXPECT_EQ(trace::layer_costs_path("run/base.sqlite"), "run/base.layers.json");
  EXPECT_EQ(trace::layer_costs_path("b.json"), "b.layers.json");
  EXPECT_EQ(trace::layer_costs_path("dir.v2/trace"), "dir.v2/trace.layers.json");
  EXPECT_EQ(trace::layer_costs_path(".hidden"), ".hidden.layers.json");
}

// The entries of a committed sidecar, as LayerCosts.
std::vector<LayerCost> entries_of(const nlohmann::json& sidecar) {
  std::vector<LayerCost> v;
  for (const nlohmann::json& l : sidecar["layers"]) {
    LayerCost c{l["name"], l["parent"], l["kind"], l["flops"]};
    c.weight_bytes = l["bytes"]["weights"];
    c.input_bytes = l["bytes"]["inputs"];
    c.output_bytes = l["bytes"]["outputs"];
    c.precision = l.value("precision", "");
    v.push_back(c);
  }
  return v;
}

// Sidecars an H200 run of the bench wrote (the run-3 reports, the fixtures beside the nsys
// captures): model, precision, shape and the file. The GPU test below rebuilds each from a model.
struct CommittedSidecar {
  const char* file;
  Precision precision;
  int batch;
  int variant;  // GPT-2: GeluPlacement; ResNet-50: StemKind
};
const CommittedSidecar kGpt2Sidecars[] = {
    {"results/2026-11-30-run3-gpt2/laptime_gpt2_bf16_b8.layers.json", Precision::BF16, 8, int(GeluPlacement::Auto)},
    {"results/2026-11-30-run3-gpt2/laptime_gpt2_bf16_b1_graph.layers.json", Precision::BF16, 1,
     int(GeluPlacement::Auto)},
    {"results/2026-11-30-run3-gpt2/laptime_gpt2_tf32_b8.layers.json", Precision::TF32, 8, int(GeluPlacement::Auto)},
    {"results/2026-11-30-run3-gpt2/laptime_gpt2_fp32_b8.layers.json", Precision::FP32, 8, int(GeluPlacement::Auto)},
    {"tests/fixtures/nsys/gpt2_bf16.layers.json", Precision::BF16, 8, int(GeluPlacement::Kernel)},
};
const CommittedSidecar kResnetSidecars[] = {
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_bf16_b256.layers.json", Precision::BF16, 256,
     int(StemKind::Auto)},
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_bf16_b32_graph.layers.json", Precision::BF16, 32,
     int(StemKind::Auto)},
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_bf16_b1_graph.layers.json", Precision::BF16, 1,
     int(StemKind::Auto)},
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_bf16_b256_cudnnstem.layers.json", Precision::BF16, 256,
     int(StemKind::Cudnn)},
    {"tests/fixtures/nsys/resnet50_bf16.layers.json", Precision::BF16, 256, int(StemKind::Cudnn)},
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_tf32_b256.layers.json", Precision::TF32, 256,
     int(StemKind::Auto)},
    {"results/2026-11-30-run3-resnet50/laptime_resnet50_fp32_b256.layers.json", Precision::FP32, 256,
     int(StemKind::Auto)},
};

// The writer, on the host: a committed sidecar's own entries written again are the same bytes
// (the format, the conventions block, the element size, the optional precision).
TEST(LayerCosts, CommittedSidecarsAreWrittenAgainByteForByte) {
  std::vector<CommittedSidecar> all(std::begin(kGpt2Sidecars), std::end(kGpt2Sidecars));
  all.insert(all.end(), std::begin(kResnetSidecars), std::end(kResnetSidecars));
  for (const CommittedSidecar& s : all) {
    SCOPED_TRACE(s.file);
    const std::string text = file_text(source_path(s.file));
    ASSERT_FALSE(text.empty());
    const nlohmann::json j = nlohmann::json::parse(text);
    EXPECT_EQ(layer_costs_json(j["model"], precision_named(j["precision"]), j["shape"], entries_of(j)).dump(1) + "\n",
              text);
  }
}

// ---- the built models (GPU) ----

// Models built once per test process: each is seconds of build. Weights are the seeded random
// ones of the real shapes (the costs depend on shapes only).
class BuiltModelCosts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The committed sidecars were written by runs with the shortcut apart; the folded way is a
    // timed choice (layers/resnet50/bottleneck.h), so it is pinned here, before any model reads it.
    setenv(env::kResnetShortcut.name, "apart", 0);
    if (gpu_available(&why_)) ctx_ = std::make_unique<Context>();
  }
  static void TearDownTestSuite() {
    gpt2_.clear();
    resnet_.clear();
    ctx_.reset();
  }
  void SetUp() override {
    if (!ctx_) GTEST_SKIP() << why_;
  }

  // GPT-2 small built for B=8, T=1024, as the bench builds it (attention auto, heuristic GEMMs).
  static GPT2& gpt2(Precision p, GeluPlacement gelu) {
    auto& m = gpt2_[{int(p), int(gelu)}];
    if (!m)
      m = std::make_unique<GPT2>(*ctx_, GPT2Config::small(), random_gpt2_weights(GPT2Config::small(), 0), p, 8, 1024,
                                 AttentionKind::Auto, gelu);
    return *m;
  }
  // ResNet-50 built for B=256 at 224. The convolutions take cuDNN's first plan untimed
  // (LAPTIME_CONV_TUNE=off, read once per process): which plan runs changes no cost, and
  // timing every candidate at B=256 would take most of the test's time.
  static ResNet50& resnet50(Precision p, StemKind stem) {
    setenv("LAPTIME_CONV_TUNE", "off", 1);
    auto& m = resnet_[{int(p), int(stem)}];
    if (!m) {
      const ResNetConfig cfg = ResNetConfig::resnet50();
      m = std::make_unique<ResNet50>(*ctx_, cfg, random_resnet50_weights(cfg, 0), p, 256, 224, stem);
    }
    return *m;
  }
  static Context& ctx() { return *ctx_; }

 private:
  static std::string why_;
  static std::unique_ptr<Context> ctx_;
  static std::map<std::pair<int, int>, std::unique_ptr<GPT2>> gpt2_;
  static std::map<std::pair<int, int>, std::unique_ptr<ResNet50>> resnet_;
};
std::string BuiltModelCosts::why_;
std::unique_ptr<Context> BuiltModelCosts::ctx_;
std::map<std::pair<int, int>, std::unique_ptr<GPT2>> BuiltModelCosts::gpt2_;
std::map<std::pair<int, int>, std::unique_ptr<ResNet50>> BuiltModelCosts::resnet_;

// The sidecar a built model's own costs make, against the one the bench wrote for that run
// before the layers published their costs: the same bytes.
void expect_sidecar(const CommittedSidecar& s, const char* model, const std::vector<LayerCost>& costs) {
  SCOPED_TRACE(s.file);
  const std::string text = file_text(source_path(s.file));
  ASSERT_FALSE(text.empty());
  const nlohmann::json want = nlohmann::json::parse(text);
  EXPECT_EQ(layer_costs_json(model, s.precision, want["shape"], costs).dump(1) + "\n", text);
}

TEST_F(BuiltModelCosts, Gpt2PublishesTheCommittedSidecars) {
  for (const CommittedSidecar& s : kGpt2Sidecars) {
    GPT2& m = gpt2(s.precision, GeluPlacement(s.variant));
    m.prepare(ctx(), s.batch, 1024);
    expect_sidecar(s, "gpt2", m.layer_costs(s.batch, 1024));
  }
}

TEST_F(BuiltModelCosts, Resnet50PublishesTheCommittedSidecars) {
  for (const CommittedSidecar& s : kResnetSidecars) {
    ResNet50& m = resnet50(s.precision, StemKind(s.variant));
    m.prepare(ctx(), s.batch);
    expect_sidecar(s, "resnet50", m.layer_costs(s.batch));
  }
}

// GPT-2 at B=2, T=5 (N = 10 tokens), bf16 with the GELU kernel: the hand counts of the
// formulas above, under the ranges the layers open; every range of the contract; composites
// summing their parts; at B=8, T=1024 the FLOPs per forward docs/PERF.md publishes.
TEST_F(BuiltModelCosts, Gpt2HandCountsAndRanges) {
  GPT2& g = gpt2(Precision::BF16, GeluPlacement::Kernel);
  g.prepare(ctx(), 2, 5);
  const auto m = by_name(g.layer_costs(2, 5));
  const LayerCost& c = m.at("h.3.attn.c_attn");
  EXPECT_EQ(c.parent, "h.3.attn");
  EXPECT_EQ(c.flops, 35389440.0);
  EXPECT_EQ(c.weight_bytes, 3543552.0);
  EXPECT_EQ(c.input_bytes, 15360.0);
  EXPECT_EQ(c.output_bytes, 46080.0);
  // Attention's core over the full 5×5 square: 2 products of 2·B·T·T·C; reads qkv, writes the heads.
  const LayerCost& core = m.at("h.3.attn.core");
  EXPECT_EQ(core.flops, 153600.0);
  EXPECT_EQ(core.weight_bytes, 0.0);
  EXPECT_EQ(core.input_bytes, 46080.0);
  EXPECT_EQ(core.output_bytes, 15360.0);
  EXPECT_EQ(m.at("h.3.attn.c_proj").input_bytes, 30720.0);  // reads the residual it accumulates into

  const std::vector<LayerCost> v = g.layer_costs(8, 1024);
  EXPECT_EQ(v.size(), 1u + 12u * 11u + 2u);  // wte; per block h, ln_1, attn{3}, ln_2, mlp{3} + 2; ln_f, lm_head
  const auto b = by_name(v);
  for (const char* leaf :
       {"ln_1", "attn.c_attn", "attn.core", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.gelu", "mlp.c_proj"})
    EXPECT_TRUE(b.count(std::string("h.11.") + leaf)) << leaf;
  for (const char* top : {"wte", "ln_f", "lm_head"}) EXPECT_EQ(b.at(top).parent, "") << top;
  const LayerCost& attn = b.at("h.0.attn");
  EXPECT_EQ(attn.flops, b.at("h.0.attn.c_attn").flops + b.at("h.0.attn.core").flops + b.at("h.0.attn.c_proj").flops);
  EXPECT_EQ(b.at("h.0").bytes(),
            b.at("h.0.ln_1").bytes() + attn.bytes() + b.at("h.0.ln_2").bytes() + b.at("h.0.mlp").bytes());
  EXPECT_EQ(b.at("lm_head").weight_bytes, 50257.0 * 768 * 2);  // the vocabulary, not the padded copy; no bias
  EXPECT_NEAR(total_flops(v) / 1e9, 2333.2, 0.05);

  // GELU in c_fc's epilogue (bf16's default): no gelu range, the MLP moves 2·N·4C elements less.
  GPT2& e = gpt2(Precision::BF16, GeluPlacement::Auto);
  ASSERT_TRUE(e.gelu_in_epilogue());
  const auto f = by_name(e.layer_costs(8, 1024));
  EXPECT_EQ(f.size(), b.size() - 12);
  EXPECT_FALSE(f.count("h.0.mlp.gelu"));
  EXPECT_EQ(f.at("h.0.mlp").bytes(), b.at("h.0.mlp").bytes() - 2.0 * 8192 * 4 * 768 * 2);
  EXPECT_EQ(f.at("h.0.mlp").flops, b.at("h.0.mlp").flops);
}

// tf32 with cuDNN's fp16 core: ln_1 writes fp16, c_attn / core / c_proj move 2-byte elements
// (c_proj's bias, residual read and output stay fp32) and say they compute in fp16.
TEST_F(BuiltModelCosts, Gpt2Tf32AttentionInFp16) {
  GPT2& g = gpt2(Precision::TF32, GeluPlacement::Auto);
  ASSERT_TRUE(g.attention_f16_core(8, 1024)) << "the bench's tf32 default runs cuDNN's fp16 core";
  const double N = 8 * 1024, C = 768;
  const auto t = by_name(g.layer_costs(8, 1024));
  EXPECT_EQ(t.at("h.0.ln_1").input_bytes, N * C * 4);
  EXPECT_EQ(t.at("h.0.ln_1").output_bytes, N * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").input_bytes, N * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").weight_bytes, (C * 3 * C + 3 * C) * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").output_bytes, N * 3 * C * 2);
  EXPECT_EQ(t.at("h.0.attn.core").input_bytes, N * 3 * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_proj").weight_bytes, C * C * 2 + C * 4);
  EXPECT_EQ(t.at("h.0.attn.c_proj").input_bytes, N * C * 2 + N * C * 4);
  EXPECT_EQ(t.at("h.0.attn.c_proj").output_bytes, N * C * 4);
  for (const char* l : {"h.0.attn.c_attn", "h.0.attn.core", "h.0.attn.c_proj"})
    EXPECT_EQ(t.at(l).precision, "fp16") << l;
  EXPECT_EQ(t.at("h.0.mlp.c_fc").precision, "");
  EXPECT_EQ(t.at("h.0.mlp.c_fc").weight_bytes, (C * 4 * C + 4 * C) * 4);
}

// ResNet-50 at B=1: every range, the pools, the shortcut conv3 reads, the blocks summing their
// convolutions, and torchvision's published 4.09 GMACs per image. The fused stem has no maxpool
// range and writes the pooled output.
TEST_F(BuiltModelCosts, Resnet50HandCountsAndRanges) {
  ResNet50& r = resnet50(Precision::BF16, StemKind::Cudnn);
  r.prepare(ctx(), 1);
  const std::vector<LayerCost> v = r.layer_costs(1);
  EXPECT_EQ(v.size(), 53u + 16u + 3u);  // convolutions (the stem too), blocks, maxpool, avgpool, fc
  const auto m = by_name(v);
  EXPECT_EQ(m.at("conv1").flops, 2.0 * 112 * 112 * 64 * 3 * 7 * 7);  // the 7×7 stem on the image
  EXPECT_EQ(m.at("maxpool").input_bytes, 112.0 * 112 * 64 * 2);
  EXPECT_EQ(m.at("maxpool").output_bytes, 56.0 * 56 * 64 * 2);
  EXPECT_EQ(m.at("avgpool").input_bytes, 7.0 * 7 * 2048 * 2);
  EXPECT_EQ(m.at("fc").flops, 2.0 * 2048 * 1000);
  EXPECT_EQ(m.at("layer3.2.conv3").input_bytes, (14.0 * 14 * 256 + 14.0 * 14 * 1024) * 2);  // + the shortcut
  EXPECT_EQ(m.at("layer3.0.downsample").parent, "layer3.0");
  const LayerCost& blk = m.at("layer1.0");
  EXPECT_EQ(blk.flops, m.at("layer1.0.conv1").flops + m.at("layer1.0.conv2").flops + m.at("layer1.0.conv3").flops +
                           m.at("layer1.0.downsample").flops);
  EXPECT_NEAR(total_flops(v) / 2 / 1e9, 4.09, 0.01);

  ResNet50& fused = resnet50(Precision::BF16, StemKind::Auto);  // bf16's default: the fused stem
  ASSERT_EQ(fused.stem_kind(), StemKind::Fused);
  fused.prepare(ctx(), 1);
  const std::vector<LayerCost> fv = fused.layer_costs(1);
  const auto f = by_name(fv);
  EXPECT_EQ(fv.size(), v.size() - 1);
  EXPECT_EQ(f.count("maxpool"), 0u);
  EXPECT_EQ(f.at("conv1").flops, m.at("conv1").flops);
  EXPECT_EQ(f.at("conv1").input_bytes, m.at("conv1").input_bytes);
  EXPECT_EQ(f.at("conv1").output_bytes, 56.0 * 56 * 64 * 2);  // pooled, bf16
  EXPECT_EQ(total_flops(fv), total_flops(v));
}

// Costs describe what runs: a shape that was not prepared is refused, not guessed.
TEST_F(BuiltModelCosts, AnUnpreparedShapeHasNoCosts) {
  EXPECT_THROW(gpt2(Precision::BF16, GeluPlacement::Auto).layer_costs(3, 7), Error);
  EXPECT_THROW(resnet50(Precision::BF16, StemKind::Auto).layer_costs(5), Error);
}

// The command line of the roofline: `laptime peak` and analyze's three options.
TEST(RooflineCommandLine, PeakAndAnalyzeOptionsParse) {
  Command c = parse_command_line({"peak", "--cache", "p.json", "--force", "--device", "1"});
  EXPECT_EQ(c.kind, Command::Kind::Peak);
  EXPECT_EQ(c.peak.cache, "p.json");
  EXPECT_TRUE(c.peak.force);
  EXPECT_EQ(c.peak.device, 1);
  c = parse_command_line({"peak"});
  EXPECT_EQ(c.peak.cache, "");
  EXPECT_FALSE(c.peak.force);
  try {
    parse_command_line({"peak", "--device", "-1"});
    ADD_FAILURE() << "--device -1 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--device must be a non-negative integer, got '-1'. Run `laptime peak --help` for usage.");
  }
  const HostCommand a = parse_host_command_line(
      {"analyze", "t.sqlite", "--layers", "t.layers.json", "--peak", "p.json", "--roofline-svg", "r.svg"});
  EXPECT_EQ(a.kind, HostCommand::Kind::Analyze);
  EXPECT_EQ(a.analyze.layers, "t.layers.json");
  EXPECT_EQ(a.analyze.peak, "p.json");
  EXPECT_EQ(a.analyze.roofline_svg, "r.svg");
}

}  // namespace
}  // namespace laptime
