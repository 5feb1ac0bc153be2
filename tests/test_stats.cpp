// core/stats.h, host-only: every statistic against values worked out by hand, and the
// properties that make it one method wherever it is used (the summary's median and
// percentiles are median() and percentile() to the last bit; a list in any order summarizes
// to the same bits).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.h"

namespace laptime::stats {
namespace {

// --- median, MAD, bootstrap ------------------------------------------------------------------------------

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

// The resampled medians' ranks (draw_resampled_medians: order statistics of uniforms, O(1) a
// resample) against the bootstrap's own definition, worked out exactly: every one of the n^n
// resamples of n values enumerated, its sorted ranks giving (lo, hi). Each (lo, hi)'s frequency
// in 200,000 draws lies within 5 standard errors of its probability.
TEST(Stats, ResampledMedianRanksFollowTheBootstrapsDistribution) {
  for (size_t n : {1, 2, 3, 4, 5, 6, 7}) {
    std::vector<std::vector<double>> exact(n, std::vector<double>(n, 0));
    std::vector<size_t> idx(n, 0), sorted(n);
    size_t total = 1;
    for (size_t i = 0; i < n; ++i) total *= n;
    for (size_t t = 0; t < total; ++t) {
      size_t x = t;
      for (size_t i = 0; i < n; ++i, x /= n) idx[i] = x % n;
      sorted = idx;
      std::sort(sorted.begin(), sorted.end());
      const size_t lo = n % 2 ? sorted[n / 2] : sorted[n / 2 - 1], hi = sorted[n / 2];
      exact[lo][hi] += 1.0 / double(total);
    }
    constexpr int kDraws = 200000;
    const MedianDraws d = draw_resampled_medians(n, kDraws, 11 + n);
    ASSERT_EQ(d.lo.size(), size_t(kDraws));
    std::vector<std::vector<double>> freq(n, std::vector<double>(n, 0));
    for (size_t r = 0; r < d.lo.size(); ++r) {
      ASSERT_LE(d.lo[r], d.hi[r]);
      ASSERT_LT(d.hi[r], n);
      freq[d.lo[r]][d.hi[r]] += 1.0 / kDraws;
    }
    for (size_t lo = 0; lo < n; ++lo)
      for (size_t hi = 0; hi < n; ++hi) {
        const double p = exact[lo][hi], se = std::sqrt(p * (1 - p) / kDraws);
        EXPECT_NEAR(freq[lo][hi], p, 5 * se + 1e-9) << "n " << n << " lo " << lo << " hi " << hi;
      }
  }
}

// Larger odd n: P(median rank <= j) = P(at least (n+1)/2 of n draws land at ranks <= j), a
// binomial tail with p = (j + 1) / n.
TEST(Stats, ResampledMedianRanksOfLargerListsFollowTheBinomialTail) {
  for (size_t n : {9, 41, 401}) {
    constexpr int kDraws = 100000;
    const MedianDraws d = draw_resampled_medians(n, kDraws, 3);
    std::vector<double> below(n + 1, 0);  // below[j]: draws with rank <= j
    for (uint32_t lo : d.lo) below[lo] += 1.0 / kDraws;
    for (size_t j = 1; j < n; ++j) below[j] += below[j - 1];
    for (size_t j = 0; j < n; ++j) {
      const double q = double(j + 1) / double(n);
      double tail = 0;  // P(Bin(n, q) >= (n + 1) / 2), term by term in logs
      for (size_t m = (n + 1) / 2; m <= n; ++m)
        tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(m + 1.0) - std::lgamma(n - m + 1.0) +
                         (m ? m * std::log(q) : 0) + (n - m ? (n - m) * std::log1p(-q) : 0));
      tail = std::min(tail, 1.0);
      EXPECT_NEAR(below[j], tail, 5 * std::sqrt(tail * (1 - tail) / kDraws) + 1e-9) << "n " << n << " rank " << j;
    }
  }
}

// The interval from the drawn ranks against the bootstrap done the long way (draw n values with
// replacement, take their median, 20,000 times), on a skewed sample of 60 and one of 61: the
// two Monte Carlo estimates of the same percentiles agree to a few hundredths of the spread.
TEST(Stats, BootstrapIntervalAgreesWithResamplingTheValuesOneByOne) {
  for (size_t n : {60, 61}) {
    std::vector<double> before, after;
    uint64_t state = 12345;
    auto next = [&state] {  // a small LCG: any numbers do
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return double(state >> 11) * 0x1.0p-53;
    };
    for (size_t i = 0; i < n; ++i) {
      before.push_back(1000 + 100 * next() * next());
      after.push_back(1030 + 100 * next() * next());
    }
    const Interval fast = bootstrap_median_change(before, after, 20000, 5);
    std::vector<double> diffs, scratch(n);
    for (int r = 0; r < 20000; ++r) {
      for (double& x : scratch) x = before[static_cast<size_t>(next() * n)];
      const double b = median(scratch);
      for (double& x : scratch) x = after[static_cast<size_t>(next() * n)];
      diffs.push_back(median(scratch) - b);
    }
    std::sort(diffs.begin(), diffs.end());
    const double spread = diffs.back() - diffs.front();
    EXPECT_NEAR(fast.lo, percentile_sorted(diffs, 0.025), 0.05 * spread) << n;
    EXPECT_NEAR(fast.hi, percentile_sorted(diffs, 0.975), 0.05 * spread) << n;
    EXPECT_LT(fast.lo, fast.hi);
  }
}

// A ratio of sums over blocks (the energy per forward of bench/energy.h). Every block at one
// ratio on each side: every resample gives the same change, so the interval is that change.
TEST(Stats, RatioOfSumsAndItsBootstrapOnConstantBlocks) {
  EXPECT_DOUBLE_EQ(ratio_of_sums({3, 5}, {1, 3}), 2.0);
  EXPECT_EQ(ratio_of_sums({}, {}), 0.0);
  std::vector<double> bj, bl, aj, al;
  for (int i = 0; i < 17; ++i) {
    bl.push_back(2.25 + 0.5 * (i % 4));
    bj.push_back(2.0 * bl.back());
    al.push_back(1.75 + 0.25 * (i % 3));
    aj.push_back(1.5 * al.back());
  }
  const Interval ci = bootstrap_ratio_change(bj, bl, aj, al, 2000, 1);
  EXPECT_NEAR(ci.lo, -0.5, 1e-12);
  EXPECT_NEAR(ci.hi, -0.5, 1e-12);
  const Interval none = bootstrap_ratio_change({}, {}, aj, al, 2000, 1);
  EXPECT_EQ(none.lo, 0.0);
  EXPECT_EQ(none.hi, 0.0);
  const Interval zero_den = bootstrap_ratio_change({1, 2}, {0, 0}, aj, al, 2000, 1);
  EXPECT_EQ(zero_den.lo, 0.0);
  EXPECT_EQ(zero_den.hi, 0.0);
}

// Against the bootstrap done the long way with another generator: blocks of 30 and 23, each with
// its own lap count and a noisy ratio, the after side 4% lower. The two Monte Carlo estimates of
// the same percentiles agree to a few hundredths of the spread; the same seed gives the same
// interval; the interval covers the change of the two ratios and excludes zero.
TEST(Stats, RatioBootstrapAgreesWithResamplingTheBlocksOneByOne) {
  uint64_t state = 987654321;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) * 0x1.0p-53;
  };
  std::vector<double> bj, bl, aj, al;
  for (int i = 0; i < 30; ++i) {
    bl.push_back(5 + 20 * next());
    bj.push_back(bl.back() * 2.8 * (1 + 0.03 * (next() - 0.5)));
  }
  for (int i = 0; i < 23; ++i) {
    al.push_back(5 + 20 * next());
    aj.push_back(al.back() * 2.8 * 0.96 * (1 + 0.03 * (next() - 0.5)));
  }
  const Interval fast = bootstrap_ratio_change(bj, bl, aj, al, 20000, 7);
  const Interval again = bootstrap_ratio_change(bj, bl, aj, al, 20000, 7);
  EXPECT_EQ(fast.lo, again.lo);
  EXPECT_EQ(fast.hi, again.hi);
  std::vector<double> diffs;
  for (int r = 0; r < 20000; ++r) {
    double sbj = 0, sbl = 0, saj = 0, sal = 0;
    for (size_t i = 0; i < bj.size(); ++i) {
      const size_t k = static_cast<size_t>(next() * bj.size());
      sbj += bj[k];
      sbl += bl[k];
    }
    for (size_t i = 0; i < aj.size(); ++i) {
      const size_t k = static_cast<size_t>(next() * aj.size());
      saj += aj[k];
      sal += al[k];
    }
    diffs.push_back(saj / sal - sbj / sbl);
  }
  std::sort(diffs.begin(), diffs.end());
  const double spread = diffs.back() - diffs.front();
  EXPECT_NEAR(fast.lo, percentile_sorted(diffs, 0.025), 0.05 * spread);
  EXPECT_NEAR(fast.hi, percentile_sorted(diffs, 0.975), 0.05 * spread);
  const double change = ratio_of_sums(aj, al) - ratio_of_sums(bj, bl);
  EXPECT_LT(fast.lo, change);
  EXPECT_GT(fast.hi, change);
  EXPECT_TRUE(fast.excludes_zero());
}

// A sparse list: its values and the zeros it does not store, in rank order.
TEST(Stats, SortedSampleHoldsTheZerosItDoesNotStore) {
  const SortedSample s({5, -2, 3}, 4);  // -2, 0, 0, 0, 0, 3, 5
  ASSERT_EQ(s.size(), 7u);
  const double want[] = {-2, 0, 0, 0, 0, 3, 5};
  for (size_t r = 0; r < 7; ++r) EXPECT_DOUBLE_EQ(s.at(r), want[r]) << r;
  EXPECT_DOUBLE_EQ(s.median(), median({5, -2, 3, 0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(SortedSample({4, 1, 3, 2}, 0).median(), 2.5);
  EXPECT_DOUBLE_EQ(SortedSample({7}, 1).median(), 3.5);
  EXPECT_DOUBLE_EQ(SortedSample().median(), 0);
  // A layer in 2 of 100 iterations: every resampled median is 0 on both sides, so is the interval.
  const SortedSample rare({50, 60}, 98);
  const Interval ci = bootstrap_median_change(rare, rare, draw_resampled_medians(100, 1000, 1),
                                              draw_resampled_medians(100, 1000, after_seed(1)));
  EXPECT_EQ(ci.lo, 0);
  EXPECT_EQ(ci.hi, 0);
}

// --- settling: the initial transient, and level shifts after it --------------------------------------------------------

TEST(Settling, TheTransientEndsAtTheFirstSettledRun) {
  const std::vector<double> s{160, 130, 104, 100, 101, 99, 100, 101, 99, 100, 100, 250};
  // Last half, x[6..11]: differences from x[7] on are 1, 2, 1, 0, 150 -> median 1, so the noise is
  // 1.4826 / sqrt(2) and the band max(5 x 1.0484, 2% of 100) = 5.2418. The run is 5 long; from
  // x[2] = 104 the five (104, 100, 101, 99, 100) lie within 100 ± 5.24; 160 and 130 before them are
  // slower: the transient is the first 2. One stretch, median 100; 250 at the end is a spike.
  const Settling st = settling(s);
  EXPECT_TRUE(st.settles);
  EXPECT_EQ(st.run, 5u);
  EXPECT_EQ(st.settled, 2u);
  EXPECT_EQ(st.start, 2u);
  EXPECT_NEAR(st.noise, 1.4826 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(st.level, 100);
  EXPECT_NEAR(st.band, 5 * 1.4826 / std::sqrt(2.0), 1e-12);
  EXPECT_EQ(st.spikes, 1u);
  EXPECT_TRUE(st.shifts.empty());
  EXPECT_EQ(settling({5, 5, 5, 5}).start, 0u);
  EXPECT_EQ(settling({}).start, 0u);
  EXPECT_EQ(settling({7}).start, 0u);
}

// The noisy run of the report that lost half its iterations to warm-up: 253, 10, 7.8, 7.6, 7.7,
// 48.7 ms, then blocks between 53.8 and 58.9 ms, 42 iterations. The dip in the middle is a shift.
TEST(Settling, ALaterDipIsAShiftNotWarmup) {
  std::vector<double> s{253, 10, 7.8, 7.6, 7.7, 48.7};
  const std::vector<double> blocks{58.6, 58.9, 53.8, 55.1, 58.2, 57.9};  // six of six
  const std::vector<double> wobble{0.1, -0.1, 0.05, -0.05, 0, 0.08};
  for (double level : blocks)
    for (double w : wobble) s.push_back(level + w);
  ASSERT_EQ(s.size(), 42u);
  const Settling st = settling(s);
  EXPECT_TRUE(st.settles);
  EXPECT_EQ(st.start, 6u) << "the transient is the first six";
  // 58.6 -> 58.9 and 58.2 -> 57.9 are within the band (2% of ~58.7 = 1.17): three shifts, at the
  // dip, its partial recovery and the return.
  ASSERT_EQ(st.shifts.size(), 3u);
  auto block_median = [&](size_t from, size_t to) {
    return median(std::vector<double>(s.begin() + static_cast<std::ptrdiff_t>(from),
                                      s.begin() + static_cast<std::ptrdiff_t>(to)));
  };
  const size_t at[] = {18, 24, 30}, bounds[] = {6, 18, 24, 30, 42};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(st.shifts[i].at, at[i]);
    EXPECT_DOUBLE_EQ(st.shifts[i].before, block_median(bounds[i], bounds[i + 1]));
    EXPECT_DOUBLE_EQ(st.shifts[i].after, block_median(bounds[i + 1], bounds[i + 2]));
  }
  EXPECT_DOUBLE_EQ(st.level, block_median(6, 18));
  EXPECT_EQ(st.spikes, 0u);
}

// A board reaching its power limit: the laps step from 3.71 to 4.0 ms part way through, late or
// early, and the iterations before the step are a level of their own, never warm-up.
TEST(Settling, APowerCapStepIsAShiftNotWarmup) {
  for (size_t step : {3u, 40u}) {
    SCOPED_TRACE(step);
    std::vector<double> s;
    for (size_t i = 0; i < 100; ++i) s.push_back((i < step ? 3.71 : 4.0) + 0.004 * double(int(i * 7 % 5) - 2));
    const Settling st = settling(s);
    EXPECT_EQ(st.start, 0u);
    ASSERT_EQ(st.shifts.size(), 1u);
    EXPECT_EQ(st.shifts[0].at, step);
    EXPECT_NEAR(st.shifts[0].before, 3.71, 0.01);
    EXPECT_NEAR(st.shifts[0].after, 4.0, 0.01);
    // With a slow first iteration (lazy loading) the transient is that one, and the step stays a shift.
    s[0] = 30;
    const Settling slow = settling(s);
    if (step > 3) {
      EXPECT_EQ(slow.start, 1u);
      ASSERT_EQ(slow.shifts.size(), 1u);
      EXPECT_EQ(slow.shifts[0].at, step);
    }
  }
}

// A series that never holds still in its first half has no transient to drop: in threes of 10
// and 50 ms the differences' median is 0 (band: 2% of the median), and every run of five holds both.
TEST(Settling, NoSettledRunNoTransient) {
  std::vector<double> s;
  for (int i = 0; i < 24; ++i) s.push_back(i / 3 % 2 ? 50 : 10);
  s.front() = 200;  // slow, yet not a transient: nothing after it settles
  const Settling st = settling(s);
  EXPECT_FALSE(st.settles);
  EXPECT_EQ(st.start, 0u);
}

// Fresh random runs: a transient of known length (slower, decaying: at least 20% above the level),
// normal noise of 0.25% cut at 3 sigma (no two values of a stretch 1.5% apart, inside the 2% floor of
// the band), and maybe one step of 5-10% at a known place: the transient found is the planted one,
// and the step is the one shift, where it was planted.
TEST(Settling, FindsThePlantedTransientAndStepInRandomRuns) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const size_t n = 20 + rng() % 200, transient = rng() % 9;
    const double level = 0.5 + double(rng() % 1000);
    const bool stepped = trial % 2 == 1 && n >= transient + 20;
    const size_t step = stepped ? transient + 8 + rng() % (n - transient - 15) : n;
    const double factor = 1 + (rng() % 2 ? 1 : -1) * (0.05 + 0.05 * double(rng() % 1000) / 1000);
    std::vector<double> s;
    for (size_t i = 0; i < n; ++i) {
      const double base = i < step ? level : level * factor;
      s.push_back(base * (1 + 0.0025 * std::clamp(noise(rng), -3.0, 3.0)));
    }
    for (size_t i = 0; i < transient; ++i) s[i] = level * (1.2 + 3.0 * double(transient - i) / double(transient));
    const Settling st = settling(s);
    ASSERT_TRUE(st.settles);
    EXPECT_EQ(st.start, transient);
    if (stepped) {
      ASSERT_EQ(st.shifts.size(), 1u) << "step at " << step << " of " << n;
      EXPECT_EQ(st.shifts[0].at, step);
    } else {
      EXPECT_TRUE(st.shifts.empty()) << "first at " << st.shifts[0].at;
    }
  }
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
