// The host fp8 reference (tests/reference/fp8_ref.h) against e4m3's definition and against
// CUDA's own conversion, and the numbers the fp8 tolerances and the scale recipe are derived
// from: e4m3's rounding error on Gaussian data, per-tensor against per-channel weight scales.
// Host only (CI).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <cuda_fp8.h>

#include "layers/device_weights.h"
#include "layers/fp8_weight.h"
#include "models/resnet50.h"
#include "tests/reference/fp8_ref.h"
#include "tests/reference/gpt2_fp8_ref.h"
#include "tests/support/compare.h"

namespace laptime {
namespace {

TEST(Fp8Reference, KnownValues) {
  EXPECT_EQ(ref::round_e4m3(1.f), 1.f);
  EXPECT_EQ(ref::round_e4m3(1.0625f), 1.f);    // halfway between 1 and 1.125: to even (1.000)
  EXPECT_EQ(ref::round_e4m3(1.1875f), 1.25f);  // halfway between 1.125 and 1.25: to even (1.010)
  EXPECT_EQ(ref::round_e4m3(1.07f), 1.125f);
  EXPECT_EQ(ref::round_e4m3(447.f), 448.f);
  EXPECT_EQ(ref::round_e4m3(1e9f), 448.f);  // saturated, not NaN
  EXPECT_EQ(ref::round_e4m3(-500.f), -448.f);
  EXPECT_EQ(ref::round_e4m3(0x1p-9f), 0x1p-9f);   // the smallest subnormal
  EXPECT_EQ(ref::round_e4m3(0x1p-10f), 0.f);      // halfway to 0: to even (0)
  EXPECT_EQ(ref::round_e4m3(0x3p-10f), 0x1p-8f);  // halfway between 2^-9 and 2^-8: to even
  EXPECT_TRUE(std::isnan(ref::round_e4m3(NAN)));
  EXPECT_EQ(ref::e4m3_bits(448.f), 0x7e);
  EXPECT_EQ(ref::e4m3_bits(-1.f), 0xb8);
  EXPECT_TRUE(std::isnan(ref::e4m3_value(0x7f)));
  for (int b = 0; b < 256; ++b) {
    const float v = ref::e4m3_value(static_cast<uint8_t>(b));
    if (std::isnan(v)) continue;
    EXPECT_EQ(ref::round_e4m3(v), v) << "code " << b;  // every value is its own rounding
    if (v != 0.f) {
      EXPECT_EQ(ref::e4m3_bits(v), b) << "code " << b;  // and encodes back (not -0)
    }
  }
}

// Every bf16 value (the device's storage type) and a million random floats across e4m3's range,
// against cuda_fp8.h's host conversion: the same rounding, written independently.
TEST(Fp8Reference, AgreesWithCudaConversion) {
  auto check = [](float x) {
    const uint8_t cuda = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    if (std::isnan(x)) return (cuda & 0x7f) == 0x7f;
    return cuda == ref::e4m3_bits(x) || (x == 0.f && (cuda & 0x7f) == 0);
  };
  int bad = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint32_t u = b << 16;
    float x;
    std::memcpy(&x, &u, sizeof x);
    if (std::isinf(x)) continue;
    if (!check(x) && bad++ < 5) ADD_FAILURE() << "bf16 bits 0x" << std::hex << b << " (" << x << ")";
  }
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<float> mant(-1.f, 1.f);
  std::uniform_int_distribution<int> expo(-14, 10);
  for (int i = 0; i < 1000000; ++i) {
    const float x = std::ldexp(mant(gen), expo(gen));
    if (!check(x) && bad++ < 10) ADD_FAILURE() << "float " << x;
  }
  EXPECT_EQ(bad, 0);
}

TEST(Fp8Reference, Bf16RoundingMatchesCuda) {
  std::mt19937_64 gen(3);
  std::normal_distribution<float> d(0.f, 10.f);
  for (int i = 0; i < 100000; ++i) {
    const float x = d(gen);
    const __nv_bfloat16 b = __float2bfloat16_rn(x);
    ASSERT_EQ(ref::round_bf16(x), __bfloat162float(b)) << x;
  }
}

// The rounding error every fp8 tolerance starts from: e4m3 keeps 3 mantissa bits, so a value's
// relative rounding error is uniform in ±2^-4 of its binade's spacing; over Gaussian data the
// RMS relative error is about 2^-3 / sqrt(12) · E[1 / (1 + m)] ≈ 0.026. The margin of 2 on
// activations (layers/linear.h) must cost nothing measurable: it only moves the smallest values
// one binade closer to the subnormals.
TEST(Fp8Reference, RoundingErrorOfGaussianData) {
  std::mt19937_64 gen(11);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> x(1 << 20);
  for (float& v : x) v = d(gen);
  const double e1 = ref::e4m3_rel_error_per_tensor(x, 1.f), e2 = ref::e4m3_rel_error_per_tensor(x, 2.f);
  std::printf("e4m3 RMS relative error, N(0,1), per tensor: margin 1 %.5f, margin 2 %.5f\n", e1, e2);
  EXPECT_GT(e1, 0.022);
  EXPECT_LT(e1, 0.030);
  EXPECT_LT(std::fabs(e2 - e1), 0.05 * e1);
}

// Per-tensor against per-output-channel weight scales on GPT-2's and ResNet-50's weight shapes
// (random init of the real distributions: GPT-2 N(0, 0.02) and the scaled projections; ResNet-50
// kaiming-normal with BatchNorm folded, which gives each output channel its own scale from γ and
// the running variance). e4m3's exponent makes the tensor's scale matter little: per channel may
// win by at most a tenth of the error here, or the recipe's choice (per tensor) is wrong.
TEST(Fp8Reference, PerTensorScalesLoseLittleToPerChannel) {
  WeightRng rng(5);
  struct Case {
    std::string name;
    int rows, cols;
    std::vector<float> w;
  };
  std::vector<Case> cases{{"gpt2 c_attn", 2304, 768, rng.normal(2304 * 768, 0.f, 0.02f)},
                          {"gpt2 mlp.c_proj", 768, 3072, rng.normal(768 * 3072, 0.f, 0.02f / std::sqrt(24.f))}};
  const HostWeights r = random_resnet50_weights(ResNetConfig::resnet50(), 9);
  for (const char* name : {"layer1.0.conv1.weight", "layer1.0.conv2.weight", "layer3.2.conv3.weight",
                           "layer4.0.downsample.weight", "fc.weight"}) {
    const HostTensor& t = r.at(name);
    const int rows = static_cast<int>(t.shape[0]);
    cases.push_back({std::string("resnet50 ") + name, rows, static_cast<int>(t.values.size() / rows), t.values});
  }
  for (const Case& c : cases) {
    const double tensor = ref::e4m3_rel_error_per_tensor(c.w),
                 channel = ref::e4m3_rel_error_per_row(c.w, c.rows, c.cols);
    std::printf("%-36s per tensor %.5f, per channel %.5f\n", c.name.c_str(), tensor, channel);
    EXPECT_LT(tensor, 1.1 * channel) << c.name;
  }
}

// The spread the GPU test of GPT-2 in fp8 against the oracle (test_fp8_layers.cpp,
// Gpt2WholeModelAgainstTheOracle) allows: its bound is the error of the recipe emulated here
// (tests/reference/gpt2_fp8_ref.h) on the same weights and batches, ±10%. How far the error moves
// when every e4m3 rounding is drawn again: the same emulation with the activation scales 9% larger
// (the grid moves under every value by most of a step; subnormals and saturation barely move).
// Measured here on that config over 30 seeds (1000-1029) and two such draws each: the recipe's
// error 4.72e-2 to 5.77e-2, a redraw within 2.7% of it (σ 0.9%); the device's bf16 roundings
// outside the GEMMs redraw fewer of its roundings and add bf16's own error, 4.1e-3 on this config
// even with bf16 GEMM operands and outputs (+0.3% in quadrature). This test keeps three of those
// seeds, so a change to the emulation or the recipe that widens the spread past half of the GPU
// test's 10% fails here, on the host.
TEST(Fp8Reference, Gpt2RecipeErrorIsStableUnderARedraw) {
  for (const uint64_t seed : {1003u, 1006u, 1026u}) {  // the three widest of the 30
    const ref::SmallGpt2 m(seed);
    const auto exact = m.exact();
    const double e = test::rel_l2(m.fp8(kFp8ActivationMargin), exact);
    const double redraw = test::rel_l2(m.fp8(kFp8ActivationMargin * 1.0905f), exact);
    std::printf("seed %llu: the recipe's error %.4e, redrawn %.4e (x%.4f)\n", static_cast<unsigned long long>(seed), e,
                redraw, redraw / e);
    EXPECT_GT(e, 0.03) << seed;  // e4m3's rounding is in it: ~0.026 on each operand
    EXPECT_LT(e, 0.08) << seed;
    EXPECT_LT(std::fabs(redraw / e - 1.0), 0.05) << seed;
  }
}

}  // namespace
}  // namespace laptime
