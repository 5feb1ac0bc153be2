// bench/layer_costs: each layer's FLOPs and bytes against counts made by hand, the totals
// against published ones, and the sidecar read back by trace/roofline. Host only.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/cli.h"
#include "bench/layer_costs.h"
#include "core/check.h"
#include "core/context.h"
#include "models/gpt2.h"
#include "models/resnet50.h"
#include "trace/roofline.h"

namespace laptime {
namespace {

std::map<std::string, LayerCost> by_name(const std::vector<LayerCost>& v) {
  std::map<std::string, LayerCost> m;
  for (const LayerCost& c : v) m[c.name] = c;
  return m;
}

// GPT-2 small at B=2, T=5 (N = 10 tokens, C = 768), bf16 (2 bytes), counted by hand:
//   c_attn: 2·10·768·2304 FLOPs; weights (2304·768 + 2304)·2; x 10·768·2; qkv 10·2304·2.
TEST(LayerCosts, Gpt2CAttnAtB2T5MatchesAHandCount) {
  const auto m = by_name(gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::BF16));
  const LayerCost& c = m.at("h.3.attn.c_attn");
  EXPECT_EQ(c.parent, "h.3.attn");
  EXPECT_EQ(c.kind, "gemm");
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
  // The output projection reads the residual stream it accumulates into.
  const LayerCost& proj = m.at("h.3.attn.c_proj");
  EXPECT_EQ(proj.flops, 2.0 * 10 * 768 * 768);
  EXPECT_EQ(proj.input_bytes, 30720.0);
  // fp32 doubles every byte and no FLOP.
  const auto f = by_name(gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::FP32));
  EXPECT_EQ(f.at("h.3.attn.c_attn").weight_bytes, 2 * 3543552.0);
  EXPECT_EQ(f.at("h.3.attn.c_attn").flops, 35389440.0);
}

TEST(LayerCosts, Gpt2HasEveryRangeOfTheContractAndCompositesSumTheirParts) {
  const std::vector<LayerCost> v = gpt2_layer_costs(GPT2Config::small(), 8, 1024, Precision::BF16);
  EXPECT_EQ(v.size(), 1u + 12u * 11u + 2u);  // wte; per block h, ln_1, attn{3}, ln_2, mlp{3} + 2; ln_f, lm_head
  const auto m = by_name(v);
  for (const char* leaf : {"ln_1", "attn.c_attn", "attn.core", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.gelu",
                           "mlp.c_proj"})
    EXPECT_TRUE(m.count(std::string("h.11.") + leaf)) << leaf;
  for (const char* top : {"wte", "ln_f", "lm_head"}) EXPECT_EQ(m.at(top).parent, "") << top;
  const LayerCost& attn = m.at("h.0.attn");
  EXPECT_EQ(attn.flops, m.at("h.0.attn.c_attn").flops + m.at("h.0.attn.core").flops + m.at("h.0.attn.c_proj").flops);
  EXPECT_EQ(attn.bytes(),
            m.at("h.0.attn.c_attn").bytes() + m.at("h.0.attn.core").bytes() + m.at("h.0.attn.c_proj").bytes());
  const LayerCost& h = m.at("h.0");
  EXPECT_EQ(h.flops, attn.flops + m.at("h.0.mlp").flops);
  EXPECT_EQ(h.bytes(), m.at("h.0.ln_1").bytes() + attn.bytes() + m.at("h.0.ln_2").bytes() + m.at("h.0.mlp").bytes());
  EXPECT_EQ(m.at("h.0.mlp.gelu").flops, 0.0);
  EXPECT_EQ(m.at("lm_head").weight_bytes, 50257.0 * 768 * 2);  // tied to wte, no bias
  // The bench's FLOPs per forward, as docs/PERF.md publishes it for this shape: 2333.2 GFLOP.
  EXPECT_NEAR(total_flops(v) / 1e9, 2333.2, 0.05);

  // GELU in c_fc's epilogue: no gelu range, the MLP moves 2·N·4C elements less, same FLOPs.
  const auto fused = by_name(gpt2_layer_costs(GPT2Config::small(), 8, 1024, Precision::BF16, false));
  EXPECT_EQ(fused.size(), m.size() - 12);
  EXPECT_FALSE(fused.count("h.0.mlp.gelu"));
  EXPECT_EQ(fused.at("h.0.mlp").bytes(), m.at("h.0.mlp").bytes() - 2.0 * 8192 * 4 * 768 * 2);
  EXPECT_EQ(fused.at("h.0.mlp").flops, m.at("h.0.mlp").flops);
}

// A 3×3 stride-2 convolution, layer2.0.conv2 of ResNet-50 at B=2: 56×56×128 -> 28×28×128.
TEST(LayerCosts, Resnet3x3ConvMatchesAHandCount) {
  const ConvLayerInfo info{"layer2.0.conv2", ConvShape{128, 128, 3, 2, 1}, 56, 28};
  const LayerCost c = conv_layer_cost(info, 2, Precision::BF16, false);
  EXPECT_EQ(c.parent, "layer2.0");
  EXPECT_EQ(c.kind, "conv");
  EXPECT_EQ(c.flops, 462422016.0);        // 2·2·28·28·128·128·9
  EXPECT_EQ(c.weight_bytes, 295168.0);    // (128·9·128 + 128)·2
  EXPECT_EQ(c.input_bytes, 1605632.0);    // 2·56·56·128·2
  EXPECT_EQ(c.output_bytes, 401408.0);    // 2·28·28·128·2
  EXPECT_EQ(conv_layer_cost(info, 2, Precision::TF32, false).weight_bytes, 590336.0);
  // With a residual, the shortcut is read too.
  EXPECT_EQ(conv_layer_cost(info, 2, Precision::BF16, true).input_bytes, 1605632.0 + 401408.0);
}

// A 1×1 stride-2 downsample reads one input pixel in four: layer2.0.downsample at B=2,
// 56×56×256 -> 28×28×512. (Counting the whole input put this layer at 135% of the copy
// bandwidth on the H200.)
TEST(LayerCosts, StridedOneByOneReadsOnlyThePixelsItsWindowsTouch) {
  const ConvLayerInfo info{"layer2.0.downsample", ConvShape{256, 512, 1, 2, 0}, 56, 28};
  const LayerCost c = conv_layer_cost(info, 2, Precision::BF16, false);
  EXPECT_EQ(c.flops, 411041792.0);       // 2·2·28·28·512·256
  EXPECT_EQ(c.weight_bytes, 263168.0);   // (512·256 + 512)·2
  EXPECT_EQ(c.input_bytes, 802816.0);    // 2·28·28·256·2
  EXPECT_EQ(c.output_bytes, 1605632.0);  // 2·28·28·512·2
}

// ResNet-50's convolutions at B and 224×224, in the model's order, from the architecture as
// the paper and torchvision describe it (not from the model's code).
std::vector<ConvLayerInfo> resnet50_convs_by_hand() {
  std::vector<ConvLayerInfo> v{{"conv1", ConvShape{3, 64, 7, 2, 3}, 224, 112}};
  const int blocks[4] = {3, 4, 6, 3};
  int in = 64, size = 56;
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < blocks[s]; ++b) {
      const int w = 64 << s, stride = (s > 0 && b == 0) ? 2 : 1, out = size / stride;
      const std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      v.push_back({p + ".conv1", ConvShape{in, w, 1, 1, 0}, size, size});
      v.push_back({p + ".conv2", ConvShape{w, w, 3, stride, 1}, size, out});
      v.push_back({p + ".conv3", ConvShape{w, 4 * w, 1, 1, 0}, out, out});
      if (b == 0) v.push_back({p + ".downsample", ConvShape{in, 4 * w, 1, stride, 0}, size, out});
      in = 4 * w;
      size = out;
    }
  return v;
}

// tf32 with cuDNN's fp16 core: ln_1 writes fp16, c_attn / core / c_proj move 2-byte elements
// (c_proj's bias, residual read and output stay fp32) and say they compute in fp16; the FLOPs
// and every other layer are tf32's.
TEST(LayerCosts, Gpt2Tf32AttentionInFp16) {
  const double N = 2 * 5, C = 768;
  const auto t = by_name(gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::TF32, false, /*f16_attention=*/true));
  const auto f = by_name(gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::TF32, false));
  EXPECT_EQ(t.at("h.0.ln_1").input_bytes, N * C * 4);
  EXPECT_EQ(t.at("h.0.ln_1").output_bytes, N * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").input_bytes, N * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").weight_bytes, (C * 3 * C + 3 * C) * 2);
  EXPECT_EQ(t.at("h.0.attn.c_attn").output_bytes, N * 3 * C * 2);
  EXPECT_EQ(t.at("h.0.attn.core").input_bytes, N * 3 * C * 2);
  EXPECT_EQ(t.at("h.0.attn.c_proj").weight_bytes, C * C * 2 + C * 4);
  EXPECT_EQ(t.at("h.0.attn.c_proj").input_bytes, N * C * 2 + N * C * 4);
  EXPECT_EQ(t.at("h.0.attn.c_proj").output_bytes, N * C * 4);
  for (const char* l : {"h.0.attn.c_attn", "h.0.attn.core", "h.0.attn.c_proj"}) {
    EXPECT_EQ(t.at(l).precision, "fp16") << l;
    EXPECT_EQ(t.at(l).flops, f.at(l).flops) << l;
    EXPECT_EQ(f.at(l).precision, "") << l;
  }
  EXPECT_EQ(t.at("h.0.mlp.c_fc").bytes(), f.at("h.0.mlp.c_fc").bytes());
  EXPECT_EQ(t.at("h.0.mlp.c_fc").precision, "");
  // The sidecar names the layer's precision only where it differs from the run's.
  const nlohmann::json j = layer_costs_json("gpt2", Precision::TF32, "B=2 T=5",
                                            gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::TF32, false, true));
  int marked = 0;
  for (const auto& l : j["layers"]) marked += l.contains("precision");
  EXPECT_EQ(marked, 3 * 12);
}

TEST(LayerCosts, Resnet50HasEveryRangeAndTheUsualFlopCount) {
  const std::vector<LayerCost> v =
      resnet50_layer_costs(ResNetConfig::resnet50(), resnet50_convs_by_hand(), 1, Precision::BF16);
  EXPECT_EQ(v.size(), 53u + 16u + 3u);  // convolutions (the stem too), blocks, maxpool, avgpool, fc
  const auto m = by_name(v);
  EXPECT_EQ(m.at("maxpool").input_bytes, 112.0 * 112 * 64 * 2);
  EXPECT_EQ(m.at("maxpool").output_bytes, 56.0 * 56 * 64 * 2);
  EXPECT_EQ(m.at("avgpool").input_bytes, 7.0 * 7 * 2048 * 2);
  EXPECT_EQ(m.at("fc").flops, 2.0 * 2048 * 1000);
  EXPECT_EQ(m.at("layer3.2.conv3").input_bytes, (14.0 * 14 * 256 + 14.0 * 14 * 1024) * 2);  // + the shortcut
  EXPECT_EQ(m.at("layer3.0.downsample").parent, "layer3.0");
  const LayerCost& blk = m.at("layer1.0");
  EXPECT_EQ(blk.flops, m.at("layer1.0.conv1").flops + m.at("layer1.0.conv2").flops + m.at("layer1.0.conv3").flops +
                           m.at("layer1.0.downsample").flops);
  // torchvision's published count for ResNet-50 at 224×224: 4.09 GMACs per image.
  EXPECT_NEAR(total_flops(v) / 2 / 1e9, 4.09, 0.01);
}

// The fused stem: one conv1 range with the convolution's FLOPs, its input and the pooled output;
// no maxpool range; every other entry as with the cuDNN stem.
TEST(LayerCosts, Resnet50FusedStemHasNoMaxpool) {
  const auto convs = resnet50_convs_by_hand();
  const std::vector<LayerCost> split = resnet50_layer_costs(ResNetConfig::resnet50(), convs, 2, Precision::BF16);
  const std::vector<LayerCost> fused =
      resnet50_layer_costs(ResNetConfig::resnet50(), convs, 2, Precision::BF16, StemKind::Fused);
  EXPECT_EQ(fused.size(), split.size() - 1);
  const auto s = by_name(split), f = by_name(fused);
  EXPECT_EQ(f.count("maxpool"), 0u);
  EXPECT_EQ(f.at("conv1").flops, s.at("conv1").flops);
  EXPECT_EQ(f.at("conv1").input_bytes, s.at("conv1").input_bytes);
  EXPECT_EQ(f.at("conv1").weight_bytes, s.at("conv1").weight_bytes);
  EXPECT_EQ(f.at("conv1").output_bytes, 2 * 56.0 * 56 * 64 * 2);  // pooled, bf16
  EXPECT_EQ(f.at("layer1.0").flops, s.at("layer1.0").flops);
  EXPECT_EQ(total_flops(fused), total_flops(split));
}

// The sidecar as the bench writes it, read back by trace/ (no bench headers there).
TEST(LayerCosts, SidecarRoundTripsThroughTheTraceReader) {
  const std::vector<LayerCost> v = gpt2_layer_costs(GPT2Config::small(), 2, 5, Precision::BF16);
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

// The committed sidecars beside the real captures (tests/fixtures/nsys) are what the bench
// writes for those runs today: GPT-2 B=8 T=1024 and ResNet-50 B=256 at 224, bf16.
// LAPTIME_REGENERATE=1 rewrites them.
void check_fixture(const std::string& name, const nlohmann::json& now) {
  const std::string path = std::string(LAPTIME_SOURCE_DIR) + "/tests/fixtures/nsys/" + name;
  if (const char* r = std::getenv("LAPTIME_REGENERATE"); r && std::string(r) == "1") write_layer_costs(path, now);
  std::ifstream f(path);
  ASSERT_TRUE(f) << path;
  EXPECT_EQ(nlohmann::json::parse(f), now) << path << " is stale: rerun with LAPTIME_REGENERATE=1";
}

TEST(LayerCosts, CommittedSidecarsAreCurrent) {
  check_fixture("gpt2_bf16.layers.json",
                layer_costs_json("gpt2", Precision::BF16, "B=8 T=1024 (8192 tokens)",
                                 gpt2_layer_costs(GPT2Config::small(), 8, 1024, Precision::BF16)));
  std::vector<ConvLayerInfo> convs = resnet50_convs_by_hand();
  check_fixture("resnet50_bf16.layers.json",
                layer_costs_json("resnet50", Precision::BF16, "B=256 224x224 (256 images)",
                                 resnet50_layer_costs(ResNetConfig::resnet50(), convs, 256, Precision::BF16)));
}

// On a GPU: what the built workloads publish is these functions on their own shapes: for
// ResNet-50 the model's convolutions in the order and sizes of the hand-made list.
TEST(LayerCosts, TheBuiltWorkloadsPublishTheseCosts) {
  std::string why;
  if (!gpu_available(&why)) GTEST_SKIP() << why;
  Context ctx;
  WorkloadOptions o;
  o.precision = Precision::BF16;
  o.model = "resnet50";
  o.batch = 2;
  auto expect_same = [](const std::vector<LayerCost>& got, const std::vector<LayerCost>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(want[i].name);
      EXPECT_EQ(got[i].name, want[i].name);
      EXPECT_EQ(got[i].parent, want[i].parent);
      EXPECT_EQ(got[i].flops, want[i].flops);
      EXPECT_EQ(got[i].bytes(), want[i].bytes());
    }
  };
  // bf16's default stem is the fused kernel (conv1 + ReLU + max pool): no `maxpool` range.
  expect_same(make_workload(ctx, o)->layer_costs(),
              resnet50_layer_costs(ResNetConfig::resnet50(), resnet50_convs_by_hand(), 2, Precision::BF16,
                                   StemKind::Fused));
  o.stem = StemKind::Cudnn;
  expect_same(make_workload(ctx, o)->layer_costs(),
              resnet50_layer_costs(ResNetConfig::resnet50(), resnet50_convs_by_hand(), 2, Precision::BF16));
  o.model = "gpt2";
  o.stem = StemKind::Auto;
  o.seq = 16;
  // bf16 runs the GELU in c_fc's epilogue (LAPTIME_GPT2_GELU unset): no `mlp.gelu` range.
  expect_same(make_workload(ctx, o)->layer_costs(),
              gpt2_layer_costs(GPT2Config::small(), 2, 16, Precision::BF16, /*gelu_kernel=*/false));
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
    EXPECT_STREQ(e.what(), "--device must be a non-negative integer, got '-1'. Run `laptime --help` for usage.");
  }
  c = parse_command_line({"analyze", "t.sqlite", "--layers", "t.layers.json", "--peak", "p.json", "--roofline-svg",
                          "r.svg"});
  EXPECT_EQ(c.kind, Command::Kind::Analyze);
  EXPECT_EQ(c.analyze.layers, "t.layers.json");
  EXPECT_EQ(c.analyze.peak, "p.json");
  EXPECT_EQ(c.analyze.roofline_svg, "r.svg");
}

}  // namespace
}  // namespace laptime
