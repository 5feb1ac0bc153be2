// The inputs `laptime bench` draws (models/policy.h: seeded_tokens, seeded_images) against their
// numpy twin in tests/e2e/e2e_common.py, which the end-to-end checks use to feed PyTorch what
// `bench --output` ran on: bit for bit, on a fresh seed each run and at the seeds where 64-bit
// arithmetic wraps. Host only (no GPU): the rule is plain C++.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "models/policy.h"
#include "tests/support/compare.h"
#include "tests/support/run_binary.h"

namespace laptime {
namespace {

// What e2e_common.py draws for (seed, count, vocab): the token ids' int32 bytes, then the
// images' float32 bytes, on standard output.
std::string numpy_draws(uint64_t seed, int64_t count, int vocab) {
  const std::string code =
      "import sys; sys.path.insert(0, sys.argv[1]); from e2e_common import seeded_images, seeded_tokens; "
      "s, n, v = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]); "
      "sys.stdout.buffer.write(seeded_tokens(s, n, v).tobytes() + seeded_images(s, n).tobytes())";
  const testing_support::RunResult r = testing_support::run_shell(
      std::string(PYTHON_EXECUTABLE) + " -c '" + code + "' " + LAPTIME_SOURCE_DIR + "/tests/e2e " +
      std::to_string(seed) + " " + std::to_string(count) + " " + std::to_string(vocab));
  EXPECT_EQ(r.status, 0) << r.out;
  return r.out;
}

TEST(SeededInputs, NumpyDrawsTheSameBits) {
  constexpr int64_t kCount = 4099;  // not a multiple of any vector width
  const std::vector<std::pair<uint64_t, int>> cases{{test::fresh_seed(), 50257},
                                                    {0, 50257},
                                                    {~uint64_t{0}, 1000},  // mix(seed) + i wraps past 2^64
                                                    {0x61C8864680B583EBull, 7}};
  for (const auto& [seed, vocab] : cases) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ", vocab " + std::to_string(vocab));
    const std::vector<int32_t> tokens = seeded_tokens(seed, kCount, vocab);
    const std::vector<float> images = seeded_images(seed, kCount);
    const std::string numpy = numpy_draws(seed, kCount, vocab);
    ASSERT_EQ(numpy.size(), kCount * (sizeof(int32_t) + sizeof(float)));
    std::vector<int32_t> np_tokens(kCount);
    std::vector<float> np_images(kCount);
    std::memcpy(np_tokens.data(), numpy.data(), kCount * sizeof(int32_t));
    std::memcpy(np_images.data(), numpy.data() + kCount * sizeof(int32_t), kCount * sizeof(float));
    EXPECT_EQ(tokens, np_tokens);
    int64_t differ = 0;
    for (int64_t i = 0; i < kCount; ++i)
      differ += std::memcmp(&images[i], &np_images[i], sizeof(float)) != 0;  // bit for bit, NaN or not
    EXPECT_EQ(differ, 0);
  }
}

// What the rule promises, independently of how it is written: ids in range and spread over it,
// values of mean 0 and variance 1 within ±2√3, other seeds other inputs.
TEST(SeededInputs, TokensAndImagesHaveTheirDistribution) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int64_t kCount = 1 << 20;
  const std::vector<int32_t> tokens = seeded_tokens(seed, kCount, 50257);
  std::vector<int64_t> per_tenth(10);
  for (const int32_t t : tokens) {
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 50257);
    ++per_tenth[static_cast<std::size_t>(int64_t{t} * 10 / 50257)];
  }
  for (const int64_t n : per_tenth) EXPECT_NEAR(double(n) / kCount, 0.1, 0.005);  // ~16 sigma
  const std::vector<float> images = seeded_images(seed, kCount);
  double sum = 0, squares = 0;
  for (const float v : images) {
    ASSERT_LE(std::fabs(v), 2 * std::sqrt(3.0));
    sum += v;
    squares += double(v) * v;
  }
  const double mean = sum / kCount, var = squares / kCount - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.005);  // sigma of the mean ~0.001
  EXPECT_NEAR(var, 1.0, 0.01);    // sigma of the variance ~0.0012
  EXPECT_NE(seeded_tokens(seed + 1, 16, 50257), seeded_tokens(seed, 16, 50257));
  EXPECT_NE(seeded_images(seed + 1, 16), seeded_images(seed, 16));
}

}  // namespace
}  // namespace laptime
