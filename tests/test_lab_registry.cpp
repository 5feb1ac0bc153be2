// laptime lab's registry and CPU references on the host (kernels/lab/registry.h, reference.h):
// the ladders' shape (at least 7 kernels of at least 3 versions, production named per precision,
// every shape valid), the bytes and FLOPs a call must move counted by hand, the sentences for
// bad words, and the references against the models' oracles (tests/reference/), which were
// written apart, and against values worked out by hand. No GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/lab/reference.h"
#include "kernels/lab/registry.h"
#include "tests/reference/fp8_ref.h"
#include "tests/reference/gpt2_ref.h"

namespace laptime::lab {
namespace {

TEST(LabRegistry, LaddersOfAtLeastThreeVersionsEndingInProduction) {
  ASSERT_GE(kernels().size(), 7u);
  for (const KernelInfo& k : kernels()) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(find_kernel(k.name), &k);
    EXPECT_GE(k.versions.size(), 3u);
    for (size_t i = 0; i < k.versions.size(); ++i) {
      EXPECT_EQ(k.versions[i].id, "v" + std::to_string(i + 1));  // numbered in ladder order
      EXPECT_FALSE(k.versions[i].title.empty());
      EXPECT_FALSE(k.versions[i].reason.empty());
      for (const std::string& p : k.versions[i].precisions) EXPECT_TRUE(k.has_precision(p)) << p;
    }
    ASSERT_FALSE(k.precisions.empty());
    for (const std::string& p : k.precisions) {
      const int prod = k.production_index(p);
      ASSERT_GE(prod, 0) << "no production version in " << p;
      EXPECT_TRUE(k.runs_in(k.versions[static_cast<size_t>(prod)], p));
      EXPECT_TRUE(k.tolerance.count(p)) << "no tolerance in " << p;
      // A floor is a version's own, never production's: what a model runs keeps the plain bound.
      EXPECT_EQ(k.floor_of(prod, p), 0.0) << "production " << k.versions[static_cast<size_t>(prod)].id << " in " << p;
      EXPECT_EQ(k.bound_of(prod, p), k.tolerance.at(p)) << "production " << k.versions[static_cast<size_t>(prod)].id;
      EXPECT_EQ(std::find(precision_names().begin(), precision_names().end(), p) != precision_names().end(), true);
    }
    // A floor or an own bound names a version and a precision it runs in.
    for (const auto* m : {&k.error_floor, &k.version_tolerance})
      for (const auto& [id, values] : *m) {
        const int v = k.version_index(id);
        ASSERT_GE(v, 0) << "a per-version bound names no version " << id;
        for (const auto& [p, f] : values) {
          EXPECT_TRUE(k.runs_in(k.versions[static_cast<size_t>(v)], p)) << id << " " << p;
          EXPECT_GT(f, 0.0) << id << " " << p;
        }
      }
    ASSERT_FALSE(k.model_shapes.empty());
    EXPECT_FALSE(k.odd_shapes.empty());
    for (const std::vector<Shape>* shapes : {&k.model_shapes, &k.odd_shapes})
      for (const Shape& s : *shapes) {
        ASSERT_EQ(s.dims.size(), k.dims.size()) << s.label;
        for (size_t d = 0; d < s.dims.size(); ++d) {
          EXPECT_GE(s.dims[d], k.dims[d].min) << s.label;
          EXPECT_LE(s.dims[d], k.dims[d].max) << s.label;
        }
        if (k.shape_error) {
          EXPECT_EQ(k.shape_error(s.dims), "") << s.label;
        }
        EXPECT_GT(k.cost(s.dims, k.precisions.front()).bytes(), 0) << s.label;
      }
    EXPECT_FALSE(k.models.empty());
  }
}

// What each call must move and compute, counted by hand at the models' shapes.
TEST(LabRegistry, BytesAndFlopsByHand) {
  auto cost = [](const std::string& name, const std::string& p, size_t shape = 0) {
    const KernelInfo& k = *find_kernel(name);
    return k.cost(k.model_shapes.at(shape).dims, p);
  };
  // LayerNorm 8192 x 768 bf16: x read and y written (2 bytes each), gain and bias once.
  EXPECT_EQ(cost("layernorm", "bf16").read, 8192.0 * 768 * 2 + 2 * 768 * 2);
  EXPECT_EQ(cost("layernorm", "bf16").written, 8192.0 * 768 * 2);
  EXPECT_EQ(cost("layernorm", "bf16").bytes(), 25'168'896.0);
  EXPECT_EQ(cost("layernorm", "fp32").bytes(), 50'337'792.0);
  EXPECT_EQ(cost("layernorm", "bf16").flops, 0);
  // bias + GELU 8192 x 3072 bf16: in, bias, out.
  EXPECT_EQ(cost("bias_gelu", "bf16").bytes(), 8192.0 * 3072 * 4 + 3072 * 2);
  // Attention B8 T1024 H12 hd64 bf16: qkv [8192, 2304] read, [8192, 768] written; FLOPs over the
  // causal half: (1 + 2 + ... + 1024) = 524800 query-key pairs a head, 2·64 for q·k and 2·64 for p·v.
  EXPECT_EQ(cost("attention", "bf16").bytes(), 8192.0 * 2304 * 2 + 8192.0 * 768 * 2);
  EXPECT_EQ(cost("attention", "bf16").flops, 8.0 * 12 * 524800 * 256);
  EXPECT_EQ(cost("attention", "bf16").flops, 12'897'484'800.0);
  // Embedding B8 T1024 C768 bf16: token ids (4 bytes), one wte row a token, wpe's 1024 rows once, out.
  EXPECT_EQ(cost("embedding", "bf16").bytes(), 8192.0 * 4 + 8192.0 * 768 * 2 + 1024.0 * 768 * 2 + 8192.0 * 768 * 2);
  // Residual 8192 x 768 fp32: x and r read, out written.
  EXPECT_EQ(cost("residual", "fp32").bytes(), 3 * 8192.0 * 768 * 4);
  // Residual + LayerNorm: x, r, gain, bias read; x + r and y written.
  EXPECT_EQ(cost("residual_layernorm", "bf16").bytes(), 4 * 8192.0 * 768 * 2 + 2 * 768 * 2);
  // Quantize: bf16 in (2), e4m3 out (1), the scale (4); amax: bf16 in, the float read and written.
  EXPECT_EQ(cost("quantize", "fp8").bytes(), 8192.0 * 768 * 3 + 4);
  EXPECT_EQ(cost("quantize", "fp8", 1).bytes(), 256.0 * 56 * 56 * 256 * 3 + 4);
  EXPECT_EQ(cost("amax", "fp8").bytes(), 8192.0 * 768 * 2 + 8);
  // Average pool [256, 7, 7, 2048] -> [256, 2048] bf16; fp32 twice the bytes.
  EXPECT_EQ(cost("avgpool", "bf16").bytes(), 256.0 * 7 * 7 * 2048 * 2 + 256.0 * 2048 * 2);
  EXPECT_EQ(cost("avgpool", "fp32").read, 256.0 * 7 * 7 * 2048 * 4);
  // Max pool [256, 112, 112, 64] -> [256, 56, 56, 64] bf16.
  EXPECT_EQ(cost("maxpool", "bf16").bytes(), 256.0 * 112 * 112 * 64 * 2 + 256.0 * 56 * 56 * 64 * 2);
  // Conv epilogue with a residual: y read and written, the residual read, the bias once; without: no residual.
  EXPECT_EQ(cost("conv_epilogue", "bf16", 0).bytes(), 802816.0 * 256 * 2 * 3 + 256 * 2);
  EXPECT_EQ(cost("conv_epilogue", "fp32", 1).bytes(), 802816.0 * 64 * 4 * 2 + 64 * 4);
  // The stem at B256 224x224 (s2d side 115, conv side 112, pooled 56): the s2d input, the
  // weights and bias, the pooled output; the FLOPs of the 7 x 7 x 3 convolution it replaces.
  EXPECT_EQ(cost("stem", "bf16").read, 256.0 * 115 * 115 * 16 * 2 + 64 * 256 * 2 + 64 * 2);
  EXPECT_EQ(cost("stem", "bf16").written, 256.0 * 56 * 56 * 64 * 2);
  EXPECT_EQ(cost("stem", "bf16").flops, 2 * 256.0 * 112 * 112 * 64 * 7 * 7 * 3);
  // The max pool's output side for odd inputs: (H - 1) / 2 + 1.
  const KernelInfo& mp = *find_kernel("maxpool");
  EXPECT_EQ(mp.cost({1, 7, 9, 1}, "fp32").written, 4.0 * 5 * 4);
}

TEST(LabRegistry, CommandLineWordsAreOneSentence) {
  EXPECT_EQ(unknown_kernel("layernorm"), "");
  EXPECT_EQ(unknown_kernel("layer_norm").rfind("unknown kernel 'layer_norm': choose one of layernorm, ", 0), 0u);
  const KernelInfo& ln = *find_kernel("layernorm");
  std::vector<int> v;
  EXPECT_EQ(parse_versions(ln, "all", &v), "");
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(parse_versions(ln, "v3,v1", &v), "");
  EXPECT_EQ(v, (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_versions(ln, "v1,v7", &v),
            "--versions: layernorm has no version 'v7': it has v1, v2, v3, v4, v5, v6 (or all, or none).");
  EXPECT_EQ(parse_versions(ln, "v1,v1", &v), "--versions names v1 twice.");
  EXPECT_EQ(parse_versions(ln, "none", &v), "");  // the learner's files alone
  EXPECT_TRUE(v.empty());
  Shape s;
  EXPECT_EQ(parse_shape(ln, "C=771", &s), "");
  EXPECT_EQ(s.dims, (std::vector<int64_t>{8192, 771}));  // rows from the model shape
  EXPECT_EQ(shape_text(ln, s.dims), "rows=8192 C=771");
  EXPECT_EQ(parse_shape(ln, "rows=3,C=x", &s), "--shape: C must be an integer from 1 to 16384, not 'x'.");
  EXPECT_EQ(parse_shape(ln, "C=99999", &s), "--shape: C must be an integer from 1 to 16384, not '99999'.");
  EXPECT_EQ(parse_shape(ln, "rows", &s),
            "--shape takes NAME=VALUE pairs separated by commas, NAME one of layernorm's dimensions (rows, C), not "
            "'rows'.");
  EXPECT_EQ(parse_shape(*find_kernel("attention"), "hd=20", &s),
            "--shape: attention's hd must be a multiple of 8 (16-byte rows), not 20.");

  KernelChoice c;
  EXPECT_EQ(add_kernel_choice("layernorm=v1", &c), "");
  EXPECT_EQ(c.at("layernorm"), 0);
  EXPECT_EQ(add_kernel_choice("layernorm=v2", &c), "--kernel names layernorm twice.");
  EXPECT_EQ(add_kernel_choice("layernorm", &c),
            "--kernel takes NAME=VERSION (layernorm=v2) or NAME=FILE.cu, not 'layernorm'.");
  EXPECT_EQ(add_kernel_choice("maxpool=v0", &c),
            "--kernel: maxpool has no version 'v0': it has v1, v2, v3, or a file of yours, NAME=FILE.cu.");
  EXPECT_EQ(add_kernel_choice("attention=v4", &c), "");
  EXPECT_EQ(kernel_choice_text(c), "attention=v4 layernorm=v1");
  EXPECT_EQ(check_kernel_choice(c, "gpt2", "bf16"), "");
  EXPECT_EQ(check_kernel_choice(c, "gpt2", "fp32"), "--kernel attention=v4 runs in bf16, not fp32 (-p fp32).");
  EXPECT_EQ(check_kernel_choice({{"layernorm", 0}}, "resnet50", "bf16"),
            "--kernel layernorm: resnet50 runs no layernorm kernel (gpt2 does; `laptime lab layernorm` runs its "
            "versions alone).");
  EXPECT_EQ(check_kernel_choice({{"residual", 0}}, "gpt2", "bf16").rfind("--kernel residual: gpt2 cannot swap it: ", 0),
            0u);
  EXPECT_EQ(check_kernel_choice({{"layernorm", 0}}, "gpt2", "fp8")
                .rfind("--kernel layernorm swaps into gpt2 in fp32, "
                       "bf16, not fp8: ",
                       0),
            0u);
  EXPECT_EQ(check_kernel_choice({{"maxpool", 1}}, "resnet50", "tf32"), "");  // fp32 storage
  EXPECT_EQ(check_kernel_choice({{"embedding", 0}}, "gpt2", "fp8"), "");     // bf16 storage
}

// --kernel NAME=FILE.cu: a word ending in .cu is a learner's file, kept apart until it is loaded;
// loaded, it is one more version past the ladder, named by its file.
TEST(LabRegistry, ALearnersFileIsOneMoreVersion) {
  KernelChoice c;
  KernelFiles f;
  EXPECT_EQ(add_kernel_choice("layernorm=my.cu", &c, &f), "");
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(f.at("layernorm"), "my.cu");
  EXPECT_EQ(add_kernel_choice("layernorm=v1", &c, &f), "--kernel names layernorm twice.");
  EXPECT_EQ(check_kernel_choice(c, "gpt2", "bf16", f), "");
  EXPECT_EQ(check_kernel_choice(c, "resnet50", "bf16", f).rfind("--kernel layernorm: resnet50 runs no layernorm", 0),
            0u);
  EXPECT_EQ(
      check_kernel_choice(c, "gpt2", "fp8", f).rfind("--kernel layernorm swaps into gpt2 in fp32, bf16, not fp8", 0),
      0u);
  const KernelInfo& ln = *find_kernel("layernorm");
  const int ladder = static_cast<int>(ln.versions.size());
  const int index = add_user_version_info({"layernorm", "my.cu", "dir/my.cu", std::string(64, 'a'), "sm_90a"});
  EXPECT_GE(index, ladder);
  ASSERT_NE(user_version_info("layernorm", index), nullptr);
  EXPECT_EQ(user_version_info("layernorm", index)->file, "dir/my.cu");
  EXPECT_EQ(user_version_info("layernorm", ladder - 1), nullptr);  // the ladder's own last
  EXPECT_EQ(user_version_info("maxpool", index), nullptr);
  EXPECT_EQ(version_name(ln, index), "my.cu");
  EXPECT_EQ(version_name(ln, 0), "v1");
  EXPECT_EQ(kernel_choice_text({{"layernorm", index}}), "layernorm=dir/my.cu (sha256 aaaaaaaaaaaaaaaa)");
  EXPECT_EQ(ln.bound_of(index, "bf16"), ln.tolerance.at("bf16"));  // the kernel's bound, no version's
  EXPECT_EQ(ln.floor_of(index, "fp32"), 0.0);
  const int next = add_user_version_info({"layernorm", "other.cu", "other.cu", std::string(64, 'b'), "sm_90a"});
  EXPECT_EQ(next, index + 1);
  EXPECT_EQ(user_version_info("layernorm", next)->name, "other.cu");
}

// --- the references -------------------------------------------------------------------------

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

TEST(LabReference, AgreesWithTheModelsOracles) {
  const int rows = 5, C = 37;
  const std::vector<float> x = random_floats(rows * C, 1, 3.f), w = random_floats(C, 2), b = random_floats(C, 3);
  const std::vector<float> ln = laptime::ref::layernorm(x, w, b, rows, C, 1e-5f);
  std::vector<float> row(C);
  for (int r = 0; r < rows; ++r) {
    ref::layernorm_row(row.data(), &x[r * C], w.data(), b.data(), C, 1e-5f);
    for (int c = 0; c < C; ++c) EXPECT_EQ(row[c], ln[r * C + c]);
  }
  const std::vector<float> zero(C, 0.f), g = laptime::ref::gelu(x);
  for (int r = 0; r < rows; ++r) {
    ref::bias_gelu_row(row.data(), &x[r * C], zero.data(), C);
    for (int c = 0; c < C; ++c) EXPECT_NEAR(row[c], g[r * C + c], 1e-6 * (1 + std::fabs(g[r * C + c])));
  }
  const int B = 2, T = 3, vocab = 11;
  const std::vector<int32_t> tokens{0, 10, 4, 4, 7, 1};
  const std::vector<float> wte = random_floats(vocab * C, 4), wpe = random_floats(T * C, 5);
  const std::vector<float> e = laptime::ref::embedding(tokens, wte, wpe, B, T, C);
  for (int bt = 0; bt < B * T; ++bt) {
    ref::embedding_row(row.data(), wte.data(), wpe.data(), tokens[bt], bt % T, C);
    for (int c = 0; c < C; ++c) EXPECT_EQ(row[c], e[bt * C + c]);
  }
}

// Every bf16 value (what the device quantizes) times the lab's scale, and a million floats, against
// tests/reference/fp8_ref.h's rounding: the bits of the format there, a search of its values here.
TEST(LabReference, E4m3RoundingAgreesWithTheFp8Oracle) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t bits = h << 16;
    float x;
    std::memcpy(&x, &bits, 4);
    if (std::isnan(x)) continue;
    for (const float s : {1.f, 224.f}) {
      const float v = x * s;
      if (!std::isfinite(v)) continue;
      const float a = ref::e4m3_round(v), b = laptime::ref::round_e4m3(v);
      bad += !(a == b && std::signbit(a) == std::signbit(b));
    }
  }
  std::mt19937 gen(6);
  std::uniform_real_distribution<float> u(-500.f, 500.f);
  for (int i = 0; i < 1'000'000; ++i) {
    const float v = u(gen) * (i % 2 ? 1.f : 1e-3f);
    bad += ref::e4m3_round(v) != laptime::ref::round_e4m3(v);
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(ref::e4m3_round(1.0625f), 1.f);  // a tie: to the even mantissa
  EXPECT_EQ(ref::e4m3_round(1e9f), 448.f);
  EXPECT_TRUE(std::isnan(ref::e4m3_round(NAN)));
  EXPECT_EQ(ref::e4m3_value(0x7e), 448.f);
}

// T = 2, one head of size 1: query 0 sees only key 0; query 1 weights both by their softmax.
TEST(LabReference, AttentionByHand) {
  const float q0 = 1, k0 = 2, v0 = 3, q1 = 4, k1 = 5, v1 = 6;  // [B=1, T=2, 3C] with C = 1
  const std::vector<float> qkv{q0, k0, v0, q1, k1, v1};
  float y = 0;
  ref::attention_row(&y, qkv.data(), 2, 1, 1, 0, 0);
  EXPECT_FLOAT_EQ(y, v0);
  ref::attention_row(&y, qkv.data(), 2, 1, 1, 0, 1);
  const double s0 = q1 * k0, s1 = q1 * k1;  // scale 1/sqrt(1)
  EXPECT_FLOAT_EQ(y, static_cast<float>((std::exp(s0) * v0 + std::exp(s1) * v1) / (std::exp(s0) + std::exp(s1))));
}

TEST(LabReference, PoolAmaxAndEpilogueByHand) {
  // A 3 x 3 image of one channel, all negative: the pool's output (0, 0) is the max of the
  // top-left 2 x 2 (padding never wins), (1, 1) of the bottom-right 2 x 2.
  const std::vector<float> in{-9, -8, -7, -6, -5, -4, -3, -2, -1};
  float y = 0;
  ref::maxpool_pixel(&y, in.data(), 3, 3, 1, 0, 0, 0);
  EXPECT_EQ(y, -5);
  ref::maxpool_pixel(&y, in.data(), 3, 3, 1, 0, 1, 1);
  EXPECT_EQ(y, -1);
  const std::vector<float> x{1, -7, 3, NAN};
  EXPECT_EQ(ref::amax(x.data(), 3), 7);
  EXPECT_TRUE(std::isnan(ref::amax(x.data(), 4)));
  const float y0[2] = {1, -3}, bias[2] = {0.5f, 1}, res[2] = {-2, 1};
  float out[2];
  ref::conv_epilogue_row(out, y0, bias, res, 2, true);
  EXPECT_EQ(out[0], 0.f);  // 1 + 0.5 - 2 < 0
  EXPECT_EQ(out[1], 0.f);
  ref::conv_epilogue_row(out, y0, bias, nullptr, 2, false);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -2.f);
  float q[3];
  const float xs[3] = {1.f, -1.f, 3.f};
  ref::quantize_row(q, xs, 224.f, 3);
  EXPECT_EQ(q[0], 224.f);
  EXPECT_EQ(q[1], -224.f);
  EXPECT_EQ(q[2], 448.f);  // 672 saturates
}

// The stem at s2d side 5 (conv side 2, pooled 1): one pooled pixel whose window holds all four
// conv pixels. Input pixel (y, x) has channel 0 = 10y + x and the rest zero; channel 0 of
// output o weighs tap (0, 0) by +1 (o = 0) or -1 (o = 1), bias 0.5: conv values 0, 1, 10, 11 (+0.5)
// for o = 0; for o = 1 their negatives + 0.5, of which only pixel (0, 0)'s is above ReLU's 0.
TEST(LabReference, StemByHand) {
  const int Hs = 5, C = 2;
  std::vector<float> in(Hs * Hs * 16, 0.f), w(C * 256, 0.f);
  for (int y = 0; y < Hs; ++y)
    for (int x = 0; x < Hs; ++x) in[(y * Hs + x) * 16] = float(10 * y + x);
  w[0] = 1.f;
  w[256] = -1.f;
  const float bias[2] = {0.5f, 0.5f};
  float out[2];
  ref::stem_pixel(out, in.data(), w.data(), bias, Hs, C, 0, 0, 0);
  EXPECT_EQ(out[0], 11.5f);
  EXPECT_EQ(out[1], 0.5f);  // conv pixel (0, 0): 0 + 0.5
  w[0] = 0.f;
  w[(1 * 4 + 2) * 16] = 2.f;  // tap (a, b) = (1, 2): pixel (y + 1, x + 2)
  ref::stem_pixel(out, in.data(), w.data(), bias, Hs, C, 0, 0, 0);
  EXPECT_EQ(out[0], 2 * 23.f + 0.5f);  // the largest conv pixel (1, 1) reads input (2, 3)
}

}  // namespace
}  // namespace laptime::lab
