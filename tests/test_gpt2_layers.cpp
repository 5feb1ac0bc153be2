// GPT-2's CUDA layers against the CPU oracle (fresh random weights and inputs, several
// shapes including odd B and T, every precision) and against PyTorch's goldens.
// Outputs are poisoned with NaN before each run, so an unwritten element fails.
// Without a GPU every test here skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "kernels/attention.cuh"
#include "kernels/convert.cuh"
#include "kernels/embedding.cuh"
#include "kernels/flash_attention_f32.cuh"
#include "kernels/gelu.cuh"
#include "kernels/layernorm.cuh"
#include "models/gpt2.h"
#include "tests/reference/gpt2_ref.h"
#include "tests/support/compare.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

using test::close;
using test::DeviceArray;

const Precision kPrecisions[] = {Precision::FP32, Precision::TF32, Precision::BF16};

// Random GPT-2 weights for one block (prefix "h.0") plus embeddings/ln_f, C and vocab small.
HostWeights tiny_weights(int n_layer, int C, int vocab, int n_ctx, uint64_t seed) {
  GPT2Config c;
  c.n_layer = n_layer;
  c.n_head = 1;
  c.n_embd = C;
  c.vocab_size = vocab;
  c.n_ctx = n_ctx;
  return random_gpt2_weights(c, seed);
}

class Gpt2LayerTest : public test::PrecisionTest {};

TEST_P(Gpt2LayerTest, Embedding) {
  for (auto [B, T, C] : {std::tuple{1, 1, 64}, {3, 77, 96}, {2, 128, 768}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " T=" << T << " C=" << C);
    const int vocab = 101;
    HostWeights hw = tiny_weights(1, C, vocab, T, seed);
    DeviceWeights w(*ctx, hw, dtype());
    std::mt19937 gen(static_cast<uint32_t>(seed));
    std::vector<int32_t> tokens(B * T);
    for (int32_t& t : tokens) t = std::uniform_int_distribution<int32_t>(0, vocab - 1)(gen);
    DeviceBuffer tok(tokens.size() * sizeof(int32_t));
    CUDA_CHECK(cudaMemcpyAsync(tok.data(), tokens.data(), tokens.size() * 4, cudaMemcpyHostToDevice, ctx->stream()));
    DeviceArray y(dtype(), static_cast<size_t>(B) * T * C);
    y.poison();
    embedding_forward(dtype(), y.data(), tok.as<int32_t>(), w.get("wte.weight"), w.get("wpe.weight"), B, T, C,
                      ctx->stream());
    // Weights are rounded on upload in bf16; the sum of two rounded values is exact to 2^-8.
    EXPECT_TRUE(close(y.download(),
                      ref::embedding(tokens, hw.at("wte.weight").values, hw.at("wpe.weight").values, B, T, C),
                      bound()));
  }
}

// The vector path, its ragged tail, and the scalar path for misaligned pointers.
TEST_P(Gpt2LayerTest, Gelu) {
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{4099}, int64_t{1000003}}) {
    for (int offset : {0, 1}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " n=" << n << " offset=" << offset);
      const auto x = test::random_vec(static_cast<size_t>(n + offset), seed, 2.f);
      DeviceArray dx(dtype(), x), dy(dtype(), x.size());
      dy.poison();
      const size_t es = dtype_size(dtype());
      gelu_forward(dtype(), static_cast<char*>(dy.data()) + offset * es,
                   static_cast<const char*>(dx.data()) + offset * es, n, ctx->stream());
      // The layer sees x as stored: in bf16, GELU's tail turns the input's rounding (2^-9) into
      // several percent of the output (x = -4.506 stored as -4.5: gelu 4.95e-6 -> 5.14e-6).
      std::vector<float> seen = x;
      if (dtype() == DType::BF16)
        for (float& v : seen) v = ref::round_bf16(v);
      std::vector<float> got = dy.download(), want = ref::gelu(seen);
      got.erase(got.begin(), got.begin() + offset);
      want.erase(want.begin(), want.begin() + offset);
      EXPECT_TRUE(close(got, want, bound()));
    }
  }
}

// Programmatic dependent launch exactly where the LayerNorm's code waits for the kernel before it:
// code built for sm_90 (this test's build, LAPTIME_TEST_SM90) on a 9.0+ device. An sm_80 build's
// PTX, JIT-compiled on a Hopper, has no wait: launched as a dependent there, it read the GEMM's
// output while it was written (GPT-2's whole-model fp32 and tf32 logits were wrong).
TEST_P(Gpt2LayerTest, LayerNormLaunchesDependentExactlyWhereItsCodeWaits) {
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device()), cudaSuccess);
  const bool expected = LAPTIME_TEST_SM90 && major >= 9;
  // The register-resident kernel's widths in both storage types (whole 16-byte vectors, at most
  // 1024 fp32), then one that is no whole number of vectors in either: the general kernel, plain.
  for (int C : {768, 1024}) EXPECT_EQ(layernorm_launches_dependent(dtype(), C), expected) << "C=" << C;
  EXPECT_FALSE(layernorm_launches_dependent(dtype(), 770));
}

// Widths for both kernels: the register-resident vector one (C a whole number of 16-byte
// vectors, up to 2048 bf16 / 1024 fp32) and the general one (100 in bf16, 1600 and 2056 in fp32).
TEST_P(Gpt2LayerTest, LayerNorm) {
  for (auto [rows, C] : {std::pair{1, 64}, {7, 100}, {333, 768}, {64, 1600}, {5, 1024}, {3, 2048}, {9, 2056}, {2, 8}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " rows=" << rows << " C=" << C);
    HostWeights hw;
    hw.add("ln.weight", {C}, test::random_vec(C, seed + 1, 0.5f));
    hw.add("ln.bias", {C}, test::random_vec(C, seed + 2, 0.5f));
    DeviceWeights w(*ctx, hw, dtype());
    LayerNorm ln(w, "ln", C, 1e-5f);
    // A large common offset: catches E[x²] - mean² cancellation.
    std::vector<float> x = test::random_vec(static_cast<size_t>(rows) * C, seed);
    for (float& v : x) v += 3.f;
    DeviceArray dx(dtype(), x), dy(dtype(), x.size());
    dy.poison();
    ln.forward(*ctx, dy.data(), dx.data(), rows);
    EXPECT_TRUE(close(dy.download(),
                      ref::layernorm(x, hw.at("ln.weight").values, hw.at("ln.bias").values, rows, C, 1e-5f), bound()));
  }
}

TEST_P(Gpt2LayerTest, LinearWithBiasAndAccumulate) {
  for (auto [rows, in, out] : {std::tuple{1, 64, 96}, {5, 33, 17}, {77, 768, 2304}, {256, 3072, 768}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " rows=" << rows << " in=" << in << " out=" << out);
    HostWeights hw;
    hw.add("fc.weight", {out, in}, test::random_vec(static_cast<size_t>(out) * in, seed + 1, 0.05f));
    hw.add("fc.bias", {out}, test::random_vec(out, seed + 2));
    DeviceWeights w(*ctx, hw, dtype());
    Linear fc(w, "fc", in, out, precision(), HasBias::Yes);
    EXPECT_THROW(fc.forward(*ctx, nullptr, nullptr, rows), Error);  // not prepared: refused, nothing planned
    fc.prepare(*ctx, rows);
    const auto x = test::random_vec(static_cast<size_t>(rows) * in, seed);
    const auto ref = ref::linear(x, hw.at("fc.weight").values, hw.at("fc.bias").values, rows, in, out);
    DeviceArray dx(dtype(), x), dy(dtype(), ref.size());
    dy.poison();
    fc.forward(*ctx, dy.data(), dx.data(), rows);
    EXPECT_TRUE(close(dy.download(), ref, bound()));

    // Accumulate::Add: y = y0 + linear(x), the fused residual.
    const auto y0 = test::random_vec(ref.size(), seed + 3);
    DeviceArray acc(dtype(), y0);
    fc.forward(*ctx, acc.data(), dx.data(), rows, Accumulate::Add);
    std::vector<float> want(ref.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = y0[i] + ref[i];
    EXPECT_TRUE(close(acc.download(), want, bound()));
  }
}

// Algorithms chosen by timing (GemmTuner) give the same products; the second layer of the
// same shape takes the cached choice without timing again.
TEST_P(Gpt2LayerTest, LinearTimedAlgorithm) {
  GemmTuner tuner;
  for (auto [rows, in, out] : {std::tuple{77, 768, 2304}, {256, 3072, 768}, {5, 33, 17}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " rows=" << rows << " in=" << in << " out=" << out);
    HostWeights hw;
    hw.add("fc.weight", {out, in}, test::random_vec(static_cast<size_t>(out) * in, seed + 1, 0.05f));
    hw.add("fc.bias", {out}, test::random_vec(out, seed + 2));
    DeviceWeights w(*ctx, hw, dtype());
    const auto x = test::random_vec(static_cast<size_t>(rows) * in, seed);
    const auto ref = ref::linear(x, hw.at("fc.weight").values, hw.at("fc.bias").values, rows, in, out);
    for (int copy = 0; copy < 2; ++copy) {
      Linear fc(w, "fc", in, out, precision(), HasBias::Yes);
      fc.prepare(*ctx, rows, &tuner);
      DeviceArray dx(dtype(), x), dy(dtype(), ref.size());
      dy.poison();
      fc.forward(*ctx, dy.data(), dx.data(), rows);
      EXPECT_TRUE(close(dy.download(), ref, bound()));
    }
  }
  EXPECT_LE(tuner.shapes_timed(), 3);
}

// Where the wgmma core must run: code built for sm_90 (this test's build, LAPTIME_TEST_SM90) on an
// sm_90 device, bf16, head size 64. Decided here, not by asking the kernel's own refusal.
bool wgmma_expected(const Context& ctx, Precision p, int hd) {
  int major = 0, minor = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.device()), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ctx.device()), cudaSuccess);
  return LAPTIME_TEST_SM90 && major == 9 && minor == 0 && p == Precision::BF16 && hd == 64;
}

// The attention cores this precision and head size allow, explicitly, then Auto. Flash: the
// bf16 kernel has head size 64; the fp32 one (fp32 and tf32 storage) 16, 32 and 64. Wgmma: as
// wgmma_expected says.
std::vector<AttentionKind> attention_kinds(const Context& ctx, Precision p, int hd) {
  std::vector<AttentionKind> k{AttentionKind::Naive};
  if (p != Precision::FP32) k.push_back(AttentionKind::Cudnn);  // tf32: the fp16 core
  if (p == Precision::BF16 ? hd == 64 : (hd == 16 || hd == 32 || hd == 64)) k.push_back(AttentionKind::Flash);
  if (wgmma_expected(ctx, p, hd)) k.push_back(AttentionKind::Wgmma);
  k.push_back(AttentionKind::Auto);
  return k;
}

TEST_P(Gpt2LayerTest, CausalSelfAttention) {
  // Every core on each shape: odd T, T < 64, T not a multiple of 64, T = 1, head sizes 16-64;
  // flash in every precision (fp32 bound 1e-5, as naive).
  for (auto [B, T, C, H] : {std::tuple{1, 1, 64, 4},
                            {3, 77, 128, 4},
                            {2, 64, 64, 2},
                            {1, 300, 768, 12},
                            {3, 77, 256, 4},
                            {2, 130, 128, 2},
                            {1, 1, 128, 2},
                            {2, 1024, 768, 12},
                            {5, 33, 768, 12}}) {
    HostWeights hw = tiny_weights(1, C, 8, T, seed);
    DeviceWeights w(*ctx, hw, dtype());
    const auto x = test::random_vec(static_cast<size_t>(B) * T * C, seed);
    const auto want = ref::attention(x, hw, "h.0.attn", B, T, C, H);
    for (AttentionKind kind : attention_kinds(*ctx, precision(), C / H)) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " T=" << T << " C=" << C << " H=" << H
                                        << " attention " << attention_kind_name(kind));
      CausalSelfAttention attn(w, "h.0.attn", C, H, precision(), kind);
      DeviceArray dx(dtype(), x), dy(dtype(), x.size());
      DeviceBuffer scratch(attn.scratch_bytes(B, T));
      EXPECT_THROW(attn.forward(*ctx, dy.data(), dx.data(), B, T, scratch.data(), Accumulate::Overwrite), Error);
      attn.prepare(*ctx, B, T);
      if (kind != AttentionKind::Auto) {
        EXPECT_EQ(attn.kind(B, T), kind);
      }
      dy.poison();
      attn.forward(*ctx, dy.data(), dx.data(), B, T, scratch.data(), Accumulate::Overwrite);
      EXPECT_TRUE(close(dy.download(), want, bound()));
      // tf32's fp16 core reads x in fp16 too, as the transformer block hands it over (ln_1
      // writes fp16): the same answer without the conversion.
      if (attn.input_dtype(B, T) != dtype()) {
        ASSERT_EQ(attn.input_dtype(B, T), DType::F16);
        DeviceBuffer x16(x.size() * 2);
        convert_f32_to_f16(x16.data(), static_cast<const float*>(dx.data()), static_cast<int64_t>(x.size()),
                           ctx->stream());
        dy.poison();
        attn.forward(*ctx, dy.data(), x16.data(), B, T, scratch.data(), Accumulate::Overwrite, DType::F16);
        EXPECT_TRUE(close(dy.download(), want, bound()));
      }
    }
  }
}

// A core that cannot run the precision or head size is refused with a sentence, before any
// device work; Auto falls back to naive where flash lacks the head size.
TEST_P(Gpt2LayerTest, UnsupportedAttentionIsRefused) {
  HostWeights hw = tiny_weights(1, 128, 8, 4, seed);
  DeviceWeights w(*ctx, hw, dtype());
  if (precision() == Precision::FP32) {
    EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 2, precision(), AttentionKind::Cudnn), Error);
  }
  EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 1, precision(), AttentionKind::Flash), Error);  // hd = 128
  EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 1, precision(), AttentionKind::Wgmma), Error);  // hd = 128
  EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 4, precision(), AttentionKind::Wgmma), Error);  // hd = 32
  if (!wgmma_expected(*ctx, precision(), 64)) {  // another device, build or precision: refused, saying why
    EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 2, precision(), AttentionKind::Wgmma), Error);
  } else {
    EXPECT_NO_THROW(CausalSelfAttention(w, "h.0.attn", 128, 2, precision(), AttentionKind::Wgmma));
  }
  if (precision() == Precision::BF16) {
    EXPECT_THROW(CausalSelfAttention(w, "h.0.attn", 128, 4, precision(), AttentionKind::Flash), Error);  // hd = 32
  } else {
    EXPECT_NO_THROW(CausalSelfAttention(w, "h.0.attn", 128, 2, precision(), AttentionKind::Flash));  // hd = 64
    EXPECT_NO_THROW(CausalSelfAttention(w, "h.0.attn", 128, 4, precision(), AttentionKind::Flash));  // hd = 32
    EXPECT_NO_THROW(CausalSelfAttention(w, "h.0.attn", 128, 8, precision(), AttentionKind::Flash));  // hd = 16
    // hd = 128: Auto runs naive in fp32; tf32's Auto asks cuDNN first (its fp16 core).
    CausalSelfAttention attn(w, "h.0.attn", 128, 1, precision(), AttentionKind::Auto);
    attn.prepare(*ctx, 2, 3);
    if (precision() == Precision::FP32) {
      EXPECT_EQ(attn.kind(2, 3), AttentionKind::Naive);
    } else {
      EXPECT_NE(attn.kind(2, 3), AttentionKind::Flash);
    }
  }
}

// softmax(q·kᵀ/sqrt(hd), causal)·v in double; qkv: [B, T, 3C] (q | k | v), out: [B, T, C].
std::vector<float> attention_core_ref(const std::vector<float>& qkv, int B, int T, int H, int hd) {
  const int C = H * hd;
  std::vector<float> out(static_cast<size_t>(B) * T * C);
  std::vector<double> p(T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i) {
        const float* q = &qkv[(static_cast<size_t>(b) * T + i) * 3 * C + h * hd];
        double m = -INFINITY, sum = 0;
        for (int j = 0; j <= i; ++j) {
          const float* k = &qkv[(static_cast<size_t>(b) * T + j) * 3 * C + C + h * hd];
          double s = 0;
          for (int d = 0; d < hd; ++d) s += static_cast<double>(q[d]) * k[d];
          p[j] = s / std::sqrt(static_cast<double>(hd));
          m = std::max(m, p[j]);
        }
        for (int j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - m));
        for (int d = 0; d < hd; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += p[j] * qkv[(static_cast<size_t>(b) * T + j) * 3 * C + 2 * C + h * hd + d];
          out[(static_cast<size_t>(b) * T + i) * C + h * hd + d] = static_cast<float>(o / sum);
        }
      }
  return out;
}

// The fp32 flash kernel on its own against the core in double, at strict fp32's 1e-5 in fp32
// and tf32 alike (it never uses TF32): every head size it has, T from 1 to past 1024 (partial
// last tiles, one tile, many), B up to 5. Inputs scaled x3, so scores spread over tens of units
// and the running max moves from key tile to key tile (the online rescale is exercised).
TEST_P(Gpt2LayerTest, FlashAttentionF32Core) {
  if (precision() == Precision::BF16)
    GTEST_SKIP() << "the fp32 flash kernel reads fp32 storage (bf16: kernels/flash_attention.cu)";
  for (auto [B, T, H, hd] : {std::tuple{1, 1, 4, 16},
                             {3, 77, 4, 32},
                             {2, 64, 2, 32},
                             {1, 300, 12, 64},
                             {5, 33, 12, 64},
                             {2, 130, 2, 64},
                             {1, 1, 2, 64},
                             {2, 129, 3, 16},
                             {1, 1024, 12, 64},
                             {1, 1030, 2, 64},
                             {4, 65, 1, 32}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " T=" << T << " H=" << H << " hd=" << hd);
    const int C = H * hd;
    const auto qkv = test::random_vec(static_cast<size_t>(B) * T * 3 * C, seed + T, 3.f);
    DeviceArray dqkv(DType::F32, qkv), dout(DType::F32, static_cast<size_t>(B) * T * C);
    dout.poison();
    flash_attention_f32_forward(static_cast<float*>(dout.data()), static_cast<const float*>(dqkv.data()), B, T, H, hd,
                                ctx->stream());
    EXPECT_TRUE(close(dout.download(), attention_core_ref(qkv, B, T, H, hd), 1e-5));
  }
}

TEST_P(Gpt2LayerTest, Mlp) {
  for (auto [rows, C] : {std::pair{7, 64}, {231, 128}, {64, 768}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " rows=" << rows << " C=" << C);
    HostWeights hw = tiny_weights(1, C, 8, 4, seed);
    DeviceWeights w(*ctx, hw, dtype());
    const auto x = test::random_vec(static_cast<size_t>(rows) * C, seed);
    const auto want = ref::mlp(x, hw, "h.0.mlp", rows, C);
    // The GELU in cuBLASLt's epilogue and as its own kernel, both against the oracle.
    for (GeluPlacement gelu : {GeluPlacement::Epilogue, GeluPlacement::Kernel, GeluPlacement::Auto}) {
      SCOPED_TRACE(::testing::Message() << "gelu placement " << static_cast<int>(gelu));
      MLP mlp(w, "h.0.mlp", C, precision(), gelu);
      mlp.prepare(*ctx, rows);
      DeviceArray dx(dtype(), x), dy(dtype(), x.size());
      DeviceBuffer scratch(mlp.scratch_bytes(1, rows));
      dy.poison();
      mlp.forward(*ctx, dy.data(), dx.data(), rows, scratch.data(), Accumulate::Overwrite);
      EXPECT_TRUE(close(dy.download(), want, bound()));
    }
  }
}

TEST_P(Gpt2LayerTest, TransformerBlock) {
  for (auto [B, T, C, H] : {std::tuple{1, 5, 64, 2}, {3, 77, 128, 4}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " T=" << T << " C=" << C << " H=" << H);
    HostWeights hw = tiny_weights(1, C, 8, T, seed);
    DeviceWeights w(*ctx, hw, dtype());
    TransformerBlock blk(w, "h.0", C, H, 1e-5f, precision());
    const auto x = test::random_vec(static_cast<size_t>(B) * T * C, seed);
    DeviceArray dx(dtype(), x);
    DeviceBuffer scratch(blk.scratch_bytes(B, T));
    blk.prepare(*ctx, B, T);
    blk.forward(*ctx, dx.data(), B, T, scratch.data());
    EXPECT_TRUE(close(dx.download(), ref::block(x, hw, "h.0", B, T, C, H, 1e-5f), bound()));
  }
}

// Whole model on random weights vs the oracle, every attention core the precision allows
// (hd = 64 here, so flash too, in every precision); fp32 bound 1e-4 for the model.
TEST_P(Gpt2LayerTest, WholeModel) {
  GPT2Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 128;
  c.vocab_size = 301;
  c.n_ctx = 64;
  HostWeights hw = random_gpt2_weights(c, seed);
  const int maxB = 4, maxT = 40;
  for (AttentionKind kind : attention_kinds(*ctx, precision(), c.n_embd / c.n_head)) {
    GPT2 model(*ctx, c, hw, precision(), maxB, maxT, kind);
    for (auto [B, T] : {std::pair{3, 29}, {4, 40}, {1, 1}}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " B=" << B << " T=" << T << " attention "
                                        << attention_kind_name(kind));
      std::mt19937 gen(static_cast<uint32_t>(seed + B + T));
      std::vector<int32_t> tokens(B * T);
      for (int32_t& t : tokens) t = std::uniform_int_distribution<int32_t>(0, c.vocab_size - 1)(gen);
      model.prepare(*ctx, B, T);
      model.upload_tokens(*ctx, tokens, B, T);
      fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(B) * T * model.logits_row_stride(), ctx->stream());
      model.forward(*ctx, B, T);
      const std::vector<float> got = model.logits_to_host(*ctx, B, T);
      const double b = precision() == Precision::FP32 ? 1e-4 : bound();
      EXPECT_TRUE(close(
          got, ref::gpt2(tokens, hw, c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.layer_norm_epsilon, B, T), b));
    }
  }
}

// The model in a CUDA Graph (as `bench --graph` runs it) matches the oracle.
TEST_P(Gpt2LayerTest, WholeModelInGraph) {
  GPT2Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 128;
  c.vocab_size = 301;
  c.n_ctx = 64;
  HostWeights hw = random_gpt2_weights(c, seed);
  const int B = 2, T = 37;
  // With the GEMM algorithms timed at build, as `LAPTIME_GPT2_GEMM=timed` runs it.
  GPT2 model(*ctx, c, hw, precision(), B, T, AttentionKind::Auto, GeluPlacement::Auto, GemmChoice::Timed);
  std::mt19937 gen(static_cast<uint32_t>(seed));
  std::vector<int32_t> tokens(B * T);
  for (int32_t& t : tokens) t = std::uniform_int_distribution<int32_t>(0, c.vocab_size - 1)(gen);
  model.upload_tokens(*ctx, tokens, B, T);
  fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(B) * T * model.logits_row_stride(), ctx->stream());
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(ctx->stream(), cudaStreamCaptureModeThreadLocal));
  model.forward(*ctx, B, T);
  CUDA_CHECK(cudaStreamEndCapture(ctx->stream(), &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, ctx->stream()));
  const std::vector<float> got = model.logits_to_host(*ctx, B, T);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const double b = precision() == Precision::FP32 ? 1e-4 : bound();
  EXPECT_TRUE(
      close(got, ref::gpt2(tokens, hw, c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.layer_norm_epsilon, B, T), b));
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, Gpt2LayerTest, ::testing::ValuesIn(kPrecisions),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

}  // namespace
}  // namespace laptime
