// core/stats.h, host-only: every statistic against values worked out by hand, and the
// properties that make it one method wherever it is used (the summary's median and
// percentiles are median() and percentile() to the last bit; a list in any order summarizes
// to the same bits).
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.h"

namespace laptime::stats {
namespace {

// --- median, MAD, bootstrap, steady state ------------------------------------------------------------------------------

TEST(Stats, MedianAndMadByHand) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
  // |x - 3| over {1, 2, 3, 4, 100} = {2, 1, 0, 1, 97}: median 1.
  EXPECT_DOUBLE_EQ(mad({1, 2, 3, 4, 100}), 1);
}

TEST(Stats, BootstrapOfAShiftCoversTheShiftAndIsReproducible) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    const double wobble = (i * 37 % 11) - 5;  // -5..5, deterministic
    a.push_back(1000 + wobble);
    b.push_back(1100 + wobble);
  }
  const Interval ci = bootstrap_median_change(a, b, 5000, 7);
  EXPECT_LE(ci.lo, 100);
  EXPECT_GE(ci.hi, 100);
  EXPECT_GT(ci.lo, 90);  // the wobble is ±5 on each side: the change is within ±10 of 100
  EXPECT_LT(ci.hi, 110);
  const Interval again = bootstrap_median_change(a, b, 5000, 7);
  EXPECT_EQ(ci.lo, again.lo);
  EXPECT_EQ(ci.hi, again.hi);
  // Identical samples: every resampled change is drawn from the same distribution, so the
  // interval straddles zero.
  const Interval same = bootstrap_median_change(a, a, 5000, 7);
  EXPECT_LT(same.lo, 0);
  EXPECT_GT(same.hi, 0);
}

TEST(Stats, SteadyStateStartsAfterTheLastEarlyOutlier) {
  // Last half {100, 101, 99, 100, 100, 250}: median 100, MAD 0.5 -> band max(5*1.4826*0.5, 2) = 3.7065.
  const std::vector<double> s{160, 130, 104, 100, 101, 99, 100, 101, 99, 100, 100, 250};
  const SteadyState st = steady_state(s);
  EXPECT_EQ(st.start, 3u);  // 104 is outside 100 ± 3.7: steady from index 3
  EXPECT_DOUBLE_EQ(st.median, 100);
  EXPECT_NEAR(st.band, 5 * 1.4826 * 0.5, 1e-12);
  EXPECT_EQ(st.outside_late, 1u);  // the spike at the end is noise, not warm-up
  EXPECT_EQ(steady_state({5, 5, 5, 5}).start, 0u);
  EXPECT_EQ(steady_state({}).start, 0u);
}

// --- summary and percentiles ------------------------------------------------------------------

TEST(Stats, PercentileInterpolatesBetweenRanks) {
  // Sorted {1, 2, 3, 4}: q = 0.1 sits at rank 0.3 -> 1 + 0.3 * (2 - 1) = 1.3; q = 0.9 at 2.7 -> 3.7.
  EXPECT_NEAR(percentile({4, 1, 3, 2}, 0.1), 1.3, 1e-12);
  EXPECT_NEAR(percentile({4, 1, 3, 2}, 0.9), 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 1), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, 3, 4}, 0.1), percentile({4, 1, 3, 2}, 0.1));
}

TEST(Stats, SummaryByHand) {
  // {10, 2, 6}: mean 6, median 6, p10 at rank 0.2 -> 2 + 0.2 * 4 = 2.8, p90 at rank 1.8 -> 6 + 0.8 * 4 = 9.2,
  // sample standard deviation sqrt((16 + 0 + 16) / 2) = 4.
  const Summary s = summarize({10, 2, 6});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 6);
  EXPECT_DOUBLE_EQ(s.median, 6);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_NEAR(s.p10, 2.8, 1e-12);
  EXPECT_NEAR(s.p90, 9.2, 1e-12);
  EXPECT_NEAR(s.stddev, 4, 1e-12);
  const Summary none = summarize({});
  EXPECT_EQ(none.n, 0u);
  EXPECT_EQ(none.mean, 0);
  EXPECT_EQ(none.stddev, 0);
  EXPECT_EQ(summarize({7}).stddev, 0);
}

TEST(Stats, SummaryIsOneMethodAndIgnoresOrder) {
  // Awkward values: an even count, magnitudes from 1e-3 to 1e6, sums that round.
  std::vector<double> v;
  for (int i = 0; i < 40; ++i) v.push_back(std::pow(10.0, (i * 7 % 10) - 3) * (1 + 0.1 * i) + 1.0 / 3);
  const Summary s = summarize(v);
  EXPECT_EQ(s.median, median(v));
  EXPECT_EQ(s.p10, percentile(v, 0.1));
  EXPECT_EQ(s.p90, percentile(v, 0.9));
  std::vector<double> reversed(v.rbegin(), v.rend()), rotated = v;
  std::rotate(rotated.begin(), rotated.begin() + 13, rotated.end());
  for (const std::vector<double>* other : {&reversed, &rotated}) {
    const Summary o = summarize(*other);
    EXPECT_EQ(o.mean, s.mean);
    EXPECT_EQ(o.stddev, s.stddev);
    EXPECT_EQ(o.median, s.median);
  }
}

}  // namespace
}  // namespace laptime::stats
