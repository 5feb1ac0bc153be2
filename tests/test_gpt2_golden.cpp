// GPT-2's CUDA layers against PyTorch's goldens directly (tests/golden, a tiny GPT-2 with
// every parameter randomised, run in float64). Per layer, in every precision.
#include <gtest/gtest.h>

#include "kernels/convert.cuh"
#include "kernels/embedding.cuh"
#include "models/gpt2.h"
#include "tests/support/compare.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

using test::close;
using test::DeviceArray;

class Gpt2Golden : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    ctx = std::make_unique<Context>();
    file = SafeTensors::open(test::golden_path("gpt2_tiny.safetensors"));
    acts = SafeTensors::open(test::golden_path("gpt2_tiny_activations.safetensors"));
    cfg = GPT2Config::from_file(file);
    host = load_gpt2_weights(file, cfg);
    w = std::make_unique<DeviceWeights>(*ctx, host, dtype());
    B = static_cast<int>(acts.meta_int("B"));
    T = static_cast<int>(acts.meta_int("T"));
  }
  Precision precision() const { return GetParam(); }
  DType dtype() const { return activation_dtype(GetParam()); }
  double bound() const { return test::layer_bound(GetParam()); }
  std::vector<float> golden(const std::string& n) const { return test::golden(acts, n); }

  // Opened after the GPU check, so a machine without a GPU skips rather than fails.
  SafeTensors file = SafeTensors::from_bytes(serialize_safetensors({}, {}), "empty");
  SafeTensors acts = SafeTensors::from_bytes(serialize_safetensors({}, {}), "empty");
  std::unique_ptr<Context> ctx;
  GPT2Config cfg;
  HostWeights host;
  std::unique_ptr<DeviceWeights> w;
  int B = 0, T = 0;
};

TEST_P(Gpt2Golden, LayerNorm) {
  for (const std::string n : {"h.0.ln_1", "h.1.ln_2", "ln_f"}) {
    SCOPED_TRACE(n);
    LayerNorm ln(*w, n, cfg.n_embd, cfg.layer_norm_epsilon);
    DeviceArray x(dtype(), golden(n + ".in")), y(dtype(), golden(n + ".out").size());
    y.poison();
    ln.forward(*ctx, y.data(), x.data(), B * T);
    EXPECT_TRUE(close(y.download(), golden(n + ".out"), bound()));
  }
}

TEST_P(Gpt2Golden, Attention) {
  for (const std::string n : {"h.0.attn", "h.1.attn"}) {
    SCOPED_TRACE(n);
    // Every core this precision and head size allow (hd = 16 here: flash in fp32 and tf32,
    // whose kernel has 16, 32 and 64, not in bf16, whose kernel has only 64).
    std::vector<AttentionKind> kinds{AttentionKind::Auto, AttentionKind::Naive};
    if (precision() != Precision::FP32) kinds.push_back(AttentionKind::Cudnn);
    const int hd = cfg.n_embd / cfg.n_head;
    if (precision() == Precision::BF16 ? hd == 64 : (hd == 16 || hd == 32 || hd == 64))
      kinds.push_back(AttentionKind::Flash);
    for (AttentionKind kind : kinds) {
      SCOPED_TRACE(attention_kind_name(kind));
      CausalSelfAttention attn(*w, n, cfg.n_embd, cfg.n_head, precision(), kind);
      attn.prepare(*ctx, B, T);
      DeviceArray x(dtype(), golden(n + ".in")), y(dtype(), golden(n + ".out").size());
      DeviceBuffer scratch(attn.scratch_bytes(B, T));
      y.poison();
      attn.forward(*ctx, y.data(), x.data(), B, T, scratch.data(), Accumulate::Overwrite);
      EXPECT_TRUE(close(y.download(), golden(n + ".out"), bound()));
    }
  }
}

TEST_P(Gpt2Golden, Mlp) {
  for (const std::string n : {"h.0.mlp", "h.1.mlp"}) {
    SCOPED_TRACE(n);
    for (GeluPlacement gelu : {GeluPlacement::Auto, GeluPlacement::Epilogue, GeluPlacement::Kernel}) {
      SCOPED_TRACE(static_cast<int>(gelu));
      MLP mlp(*w, n, cfg.n_embd, precision(), gelu);
      mlp.prepare(*ctx, B * T);
      DeviceArray x(dtype(), golden(n + ".in")), y(dtype(), golden(n + ".out").size());
      DeviceBuffer scratch(mlp.scratch_bytes(B, T));
      y.poison();
      mlp.forward(*ctx, y.data(), x.data(), B * T, scratch.data(), Accumulate::Overwrite);
      EXPECT_TRUE(close(y.download(), golden(n + ".out"), bound()));
    }
  }
}

TEST_P(Gpt2Golden, Blocks) {
  for (const std::string n : {"h.0", "h.1"}) {
    SCOPED_TRACE(n);
    TransformerBlock blk(*w, n, cfg.n_embd, cfg.n_head, cfg.layer_norm_epsilon, precision());
    DeviceArray x(dtype(), golden(n + ".in"));
    DeviceBuffer scratch(blk.scratch_bytes(B, T));
    blk.prepare(*ctx, B, T);
    blk.forward(*ctx, x.data(), B, T, scratch.data());
    EXPECT_TRUE(close(x.download(), golden(n + ".out"), bound()));
  }
}

TEST_P(Gpt2Golden, WholeModelLogits) {
  GPT2 model(*ctx, cfg, host, precision(), B, T);
  model.upload_tokens(*ctx, test::golden_tokens(acts), B, T);
  fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(B) * T * model.logits_row_stride(), ctx->stream());
  model.forward(*ctx, B, T);
  const double b = precision() == Precision::FP32 ? 1e-4 : bound();
  EXPECT_TRUE(close(model.logits_to_host(*ctx, B, T), golden("logits"), b));
}

TEST_P(Gpt2Golden, BadShapesAndTokensAreRefused) {
  GPT2 model(*ctx, cfg, host, precision(), B, T);
  EXPECT_THROW(model.forward(*ctx, 0, T), Error);
  EXPECT_THROW(model.forward(*ctx, B, T + 1), Error);
  // The build contract: forward() never plans; a shape inside the limits but not prepared is refused.
  if (T > 1) {
    EXPECT_THROW(model.forward(*ctx, B, T - 1), Error);
    model.prepare(*ctx, B, T - 1);
    EXPECT_NO_THROW(model.forward(*ctx, B, T - 1));
  }
  std::vector<int32_t> bad(static_cast<size_t>(B) * T, 0);
  bad[3] = cfg.vocab_size;
  try {
    model.upload_tokens(*ctx, bad, B, T);
    FAIL() << "an out-of-vocabulary token was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the vocabulary"), std::string::npos) << e.what();
  }
  try {  // ~1.5 TB of activations: more than any GPU has
    GPT2 huge(*ctx, cfg, host, precision(), 1 << 24, cfg.n_ctx);
    FAIL() << "an impossible allocation succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
  }
  try {
    GPT2 too_long(*ctx, cfg, host, precision(), 1, cfg.n_ctx + 1);
    FAIL() << "T > n_ctx was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the model's context"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, Gpt2Golden,
                         ::testing::Values(Precision::FP32, Precision::TF32, Precision::BF16),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

}  // namespace
}  // namespace laptime
