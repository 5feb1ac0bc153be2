// laptime's statistics, one method per statistic: what `laptime bench` reports over its laps,
// what `laptime analyze` reports over its iterations and what `laptime diff` compares. Host-only
// (part of laptime_host, core/CMakeLists.txt), so bench and trace use the same definitions and
// the tests check them without a GPU. Two ways of computing the same statistic would disagree
// one day in the last digit of a report; here there is one of each.
//
// The methods:
//   median      the middle value of the sorted list; for an even count the mean of the two
//               middle values, (a + b) / 2. 0 for an empty list.
//   percentile  linear interpolation between ranks: for q in [0, 1], position q · (n - 1) in
//               the sorted list, v[lo] + (pos - lo) · (v[hi] - v[lo]) (numpy's default).
//   mean        the sum of the sorted values, smallest first, over n: the same list in any
//               order gives the same mean to the last bit.
//   stddev      the sample standard deviation, sqrt(sum (x - mean)^2 / (n - 1)) over the
//               sorted values; 0 for fewer than two.
//   MAD         the median of |x - median| (unscaled: 1.4826 · MAD estimates the standard
//               deviation of normal noise).
//   bootstrap   the percentile-bootstrap interval of a change of medians, or of a change of a
//               ratio of sums over blocks (below), drawn from a
//               fixed-seed SplitMix64 stream with its own variates (uniform, normal, gamma,
//               beta), so the same inputs give the same interval on every platform (the
//               standard library's distributions are implementation-defined).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace laptime::stats {

// Every statistic of a list at once (all 0 for an empty one); the unit is the list's.
struct Summary {
  size_t n = 0;
  double mean = 0, median = 0, min = 0, max = 0;
  double p10 = 0, p90 = 0;  // percentile(0.1), percentile(0.9)
  double stddev = 0;        // sample standard deviation; 0 for fewer than two values
};
Summary summarize(std::vector<double> values);

double median(std::vector<double> v);
// q in [0, 1]; 0 for an empty list.
double percentile(std::vector<double> v, double q);
// The same, for a list already sorted ascending (no copy, no sort).
double percentile_sorted(const std::vector<double>& sorted, double q);
double mad(const std::vector<double>& v);

struct Interval {
  double lo = 0, hi = 0;
  bool excludes_zero() const { return lo > 0 || hi < 0; }
};

// A list of values held as its sorted values plus a count of zeros not stored: a layer's time
// per iteration where it ran, and 0 in every other iteration (a sparse series: a layer that runs
// in one iteration of 4,000 costs one value, not 4,000).
class SortedSample {
 public:
  SortedSample() = default;
  SortedSample(std::vector<double> values, size_t zeros);  // any order; sorted here
  size_t size() const { return values_.size() + zeros_; }
  double at(size_t rank) const;  // the rank-th smallest (0-based), the zeros among them
  double median() const;         // median()'s definition
 private:
  std::vector<double> values_;  // ascending
  size_t zeros_ = 0, negatives_ = 0;
};

// The ranks, in a sorted list of n values, of the medians of `resamples` bootstrap resamples
// (n values drawn from the list with replacement): resample r's median is the list's
// (at(lo[r]) + at(hi[r])) / 2, lo == hi for odd n. Drawn once per list length and stream, they
// serve every list of that length. The method: the list's ranks drawn uniformly are
// floor(n U) for uniform U in [0, 1), so the k-th smallest of n draws is floor(n U_(k)), and the
// k-th order statistic of n uniforms is Beta(k, n - k + 1); for even n the next one is
// U_(k) + (1 - U_(k)) (1 - V^(1/(n-k))) (the least of the n - k uniforms above U_(k)). Each
// resample costs O(1) instead of drawing and selecting n values: the same distribution of the
// resampled median as drawing the values one by one, at a cost independent of n.
struct MedianDraws {
  size_t n = 0;
  std::vector<uint32_t> lo, hi;
  uint32_t min_lo = 0, max_hi = 0;  // over every resample
};
MedianDraws draw_resampled_medians(size_t n, int resamples, uint64_t seed);

// The percentile-bootstrap interval of median(after) - median(before) at `level` (0.95: the
// 2.5th and 97.5th percentiles of the resampled differences). Each resample draws
// before.size() values from `before` and after.size() from `after`, with replacement,
// independently (the two runs' iterations are not paired): its medians are those of `b` and
// `a` (draw_resampled_medians for each list's length, from two independent streams). When
// every resampled median of each side is one value (a layer absent from most iterations: all
// zeros) the interval is that one change, found without a pass over the resamples. An empty
// list gives {0, 0}.
Interval bootstrap_median_change(const SortedSample& before, const SortedSample& after, const MedianDraws& b,
                                 const MedianDraws& a, double level = 0.95);
// The same for two lists, drawn here: the before side from `seed`, the after side from a stream
// derived from it (after_seed).
Interval bootstrap_median_change(const std::vector<double>& before, const std::vector<double>& after, int resamples,
                                 uint64_t seed, double level = 0.95);
uint64_t after_seed(uint64_t seed);

// A ratio of sums, sum(num) / sum(den), over the blocks of a run (bench/energy.h: the joules of
// each stretch between two steps of NVML's energy counter over the laps inside it), and the
// percentile-bootstrap interval of its change between two runs at `level`: each resample draws
// as many blocks as each side has, with replacement, independently (the before side from `seed`,
// the after side from after_seed(seed)), and takes the difference of the two ratios. A resample
// whose den sums to 0 on either side is left out. Empty sides, or none left: {0, 0}.
double ratio_of_sums(const std::vector<double>& num, const std::vector<double>& den);
Interval bootstrap_ratio_change(const std::vector<double>& before_num, const std::vector<double>& before_den,
                                const std::vector<double>& after_num, const std::vector<double>& after_den,
                                int resamples, uint64_t seed, double level = 0.95);

// Where a series of per-iteration times settles after its initial transient (the warm-up), and
// where its level shifts later. Warm-up is the initial transient only: a change of level later in
// the run (a dip, a power-cap step, other work on the GPU) is a shift, reported with the levels on
// both sides, and never makes the iterations before it warm-up. The rule (docs/DESIGN-NOTES.md,
// "Warm-up and level shifts"; tests/fixtures/steady_rules.py writes it again for the fixtures'
// references):
//   noise   s = 1.4826 · median |x[i+1] - x[i]| / sqrt(2) over the last half of the series: the
//           standard deviation of normal noise, from differences, so a level shift or a spike
//           moves a difference or two, not their median (the transient sits in the first half);
//   band    around a level m: max(kNoiseWidth · s, kMinBand · |m|) (the relative floor keeps a
//           very quiet series from calling every wobble a change);
//   run     kSettledRun iterations, or half the series rounded up when that is fewer;
//   settled the first k, at most n/2, where the run k .. k+run-1 lies within the band around its
//           own median. When no run of the first half does, the series does not settle
//           (`settles` false) and has no initial transient to find;
//   start   the end of the initial transient: `settled` when an iteration before it is slower
//           than that run's band (warm-up costs time: loading, allocating, tuning, recording
//           graphs), else 0. A start that is only faster than the run is a level of its own (a
//           clock that drops, a power cap): when every iteration before `settled` is faster than
//           the band, the first shift is at `settled`;
//   shifts  after settled: a position k whose run's median and the previous run's differ by more
//           than the band around the earlier one, and by the most among the positions in a row
//           that do (one step is one shift); each with the medians of the stretches before and
//           after it (from the previous shift, or start, to the next one, or the end). A shift
//           whose two stretches' medians end up within the band of each other is dropped;
//   level   the median of the stretch the settled run begins;
//   spikes  iterations from start on outside the band around their own stretch's median.
struct LevelShift {
  size_t at = 0;      // index into the series of the first iteration at the new level
  double before = 0;  // median of the stretch before it, the series' unit
  double after = 0;   // median of the stretch from it
};
struct Settling {
  size_t start = 0;     // index into the series of the first iteration past the transient
  size_t settled = 0;   // index into the series where the first settled run begins
  size_t run = 0;       // the run's length: min(kSettledRun, n - n/2)
  bool settles = true;  // false: no run in the first half is settled (start is then 0)
  double level = 0;     // median of the stretch the first settled run begins
  double band = 0;      // half-width of the band around `level`, the series' unit
  double noise = 0;     // s, the series' unit
  size_t spikes = 0;    // iterations from `start` on outside their stretch's band
  std::vector<LevelShift> shifts;
};
constexpr double kNoiseWidth = 5.0;
constexpr double kMinBand = 0.02;
constexpr size_t kSettledRun = 5;
Settling settling(const std::vector<double>& series);

}  // namespace laptime::stats
