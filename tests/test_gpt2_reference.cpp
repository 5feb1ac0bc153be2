// The CPU reference oracle against PyTorch's goldens (host only: runs in CI).
// The goldens come from a float64 PyTorch model, stored as float32, so the oracle (double
// loops) must match them to float32 rounding: 1e-6.
#include <gtest/gtest.h>

#include "models/gpt2.h"
#include "tests/reference/gpt2_ref.h"
#include "tests/support/compare.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

constexpr double kOracleBound = 1e-6;

class Gpt2Reference : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg = GPT2Config::from_file(weights_file);
    w = load_gpt2_weights(weights_file, cfg);
    B = static_cast<int>(acts.meta_int("B"));
    T = static_cast<int>(acts.meta_int("T"));
  }
  SafeTensors weights_file = SafeTensors::open(test::golden_path("gpt2_tiny.safetensors"));
  SafeTensors acts = SafeTensors::open(test::golden_path("gpt2_tiny_activations.safetensors"));
  GPT2Config cfg;
  HostWeights w;
  int B = 0, T = 0;
  std::vector<float> in(const std::string& n) { return test::golden(acts, n + ".in"); }
  std::vector<float> out(const std::string& n) { return test::golden(acts, n + ".out"); }
};

TEST_F(Gpt2Reference, ConfigFromMetadata) {
  EXPECT_EQ(cfg.n_layer, 2);
  EXPECT_EQ(cfg.n_head, 4);
  EXPECT_EQ(cfg.n_embd, 64);
  EXPECT_EQ(cfg.vocab_size, 96);
  EXPECT_EQ(cfg.n_ctx, 32);
}

TEST_F(Gpt2Reference, Embedding) {
  const auto y =
      ref::embedding(test::golden_tokens(acts), w.at("wte.weight").values, w.at("wpe.weight").values, B, T, cfg.n_embd);
  EXPECT_TRUE(test::close(y, test::golden(acts, "embedding.out"), kOracleBound));
}

TEST_F(Gpt2Reference, LayerNorms) {
  for (const std::string n : {"h.0.ln_1", "h.0.ln_2", "h.1.ln_1", "h.1.ln_2", "ln_f"}) {
    SCOPED_TRACE(n);
    const auto y = ref::layernorm(in(n), w.at(n + ".weight").values, w.at(n + ".bias").values, B * T, cfg.n_embd,
                                  cfg.layer_norm_epsilon);
    EXPECT_TRUE(test::close(y, out(n), kOracleBound));
  }
}

TEST_F(Gpt2Reference, Attention) {
  for (const std::string n : {"h.0.attn", "h.1.attn"}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(test::close(ref::attention(in(n), w, n, B, T, cfg.n_embd, cfg.n_head), out(n), kOracleBound));
  }
}

TEST_F(Gpt2Reference, Mlp) {
  for (const std::string n : {"h.0.mlp", "h.1.mlp"}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(test::close(ref::mlp(in(n), w, n, B * T, cfg.n_embd), out(n), kOracleBound));
  }
}

TEST_F(Gpt2Reference, Blocks) {
  for (const std::string n : {"h.0", "h.1"}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(test::close(ref::block(in(n), w, n, B, T, cfg.n_embd, cfg.n_head, cfg.layer_norm_epsilon), out(n),
                            kOracleBound));
  }
}

TEST_F(Gpt2Reference, WholeModelLogits) {
  const auto logits = ref::gpt2(test::golden_tokens(acts), w, cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.vocab_size,
                                cfg.layer_norm_epsilon, B, T);
  EXPECT_TRUE(test::close(logits, test::golden(acts, "logits"), kOracleBound));
}

// Bad configurations are refused with a sentence naming the field, before any GPU work.
TEST(Gpt2Config, RejectsBadConfigs) {
  GPT2Config c;
  c.n_head = 5;
  EXPECT_THROW(
      {
        try {
          c.validate();
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("not divisible by n_head"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  GPT2Config z;
  z.n_layer = 0;
  EXPECT_THROW(z.validate(), Error);
  GPT2Config eps;
  eps.layer_norm_epsilon = -1.f;
  EXPECT_THROW(eps.validate(), Error);
}

TEST(Gpt2Config, WrongModelInFileIsRefused) {
  std::map<std::string, std::string> meta{{"laptime.model", "resnet50"}, {"laptime.format", "1"}};
  SafeTensors f = SafeTensors::from_bytes(serialize_safetensors({}, meta), "resnet.safetensors");
  try {
    GPT2Config::from_file(f);
    FAIL() << "a resnet50 file was accepted as gpt2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not gpt2"), std::string::npos) << e.what();
  }
}

TEST(Gpt2Weights, MissingAndMisshapenTensorsAreNamed) {
  GPT2Config c;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_embd = 8;
  c.vocab_size = 11;
  c.n_ctx = 4;
  HostWeights good = random_gpt2_weights(c, 7);
  std::vector<TensorBlob> blobs;
  for (const auto& [name, t] : good.all()) {
    if (name == "h.0.mlp.c_fc.bias") continue;  // missing
    TensorBlob b{name, DType::F32, t.shape, {}};
    if (name == "h.0.attn.c_proj.weight") b.shape = {8, 4};  // misshapen
    const size_t n = b.shape.size() == 2 ? b.shape[0] * b.shape[1] : b.shape[0];
    b.bytes.resize(n * 4);
    blobs.push_back(std::move(b));
  }
  SafeTensors f = SafeTensors::from_bytes(serialize_safetensors(blobs, {}), "bad.safetensors");
  try {
    load_gpt2_weights(f, c);
    FAIL() << "a file with a missing tensor was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(msg.find("h.0.attn.c_proj.weight") != std::string::npos ||
                msg.find("h.0.mlp.c_fc.bias") != std::string::npos)
        << msg;
  }
}

TEST(Gpt2Weights, RandomWeightsAreSeeded) {
  GPT2Config c;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_embd = 8;
  c.vocab_size = 11;
  c.n_ctx = 4;
  const auto a = random_gpt2_weights(c, 1), b = random_gpt2_weights(c, 1), d = random_gpt2_weights(c, 2);
  EXPECT_EQ(a.at("h.0.attn.c_attn.weight").values, b.at("h.0.attn.c_attn.weight").values);
  EXPECT_NE(a.at("h.0.attn.c_attn.weight").values, d.at("h.0.attn.c_attn.weight").values);
  EXPECT_EQ(a.param_count(), 11 * 8 + 4 * 8 + 12 * 8 * 8 + 13 * 8 + 2 * 8);
}

}  // namespace
}  // namespace laptime
