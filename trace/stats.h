// Statistics for comparing runs: medians, a bootstrap confidence interval for the change of
// a median, and where a series of laps settles into its steady state.
//
// Host-only, deterministic: the bootstrap draws from a fixed-seed SplitMix64 stream with its
// own index mapping, so the same inputs give the same interval on every platform (the
// standard library's distributions are implementation-defined).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace laptime::trace {

// n, mean, median, min and max of a list (all 0 for an empty one); the unit is the list's.
struct Summary {
  size_t n = 0;
  double mean = 0, median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> values);

// The median (mean of the two middle values for an even count); 0 for an empty list.
double median_of(std::vector<double> v);

// The median absolute deviation from the median (unscaled); 0 for an empty list.
double mad_of(const std::vector<double>& v);

struct Interval {
  double lo = 0, hi = 0;
  bool excludes_zero() const { return lo > 0 || hi < 0; }
};

// The percentile-bootstrap interval of median(after) - median(before) at `level` (0.95: the
// 2.5th and 97.5th percentiles of the resampled differences). Each resample draws
// before.size() values from `before` and after.size() from `after`, with replacement,
// independently (the two runs' iterations are not paired). Both lists must be non-empty.
Interval bootstrap_median_change(const std::vector<double>& before, const std::vector<double>& after,
                                 int resamples, uint64_t seed, double level = 0.95);

// Where a series of per-iteration times settles. The rule (documented in docs/PROFILING.md):
// the reference is the last half of the series (iterations n/2 .. n-1); its median m and MAD
// give the steady band m ± max(kMadWidth · 1.4826 · MAD, kMinBand · m) (1.4826 · MAD
// estimates the standard deviation of normal noise; the relative floor keeps a
// very quiet series from calling every wobble a transient). The steady state starts right
// after the last iteration of the first half that lies outside the band, or at 0 when none
// does. Iterations of the last half outside the band are spikes, not warm-up: they do not
// move the start (and by construction at least half the series is always steady).
struct SteadyState {
  size_t start = 0;           // index into the series of the first steady iteration
  double median = 0;          // m, of the last half
  double band = 0;            // the half-width of the band, same unit as the series
  size_t outside_late = 0;    // iterations from `start` on that lie outside the band (spikes)
};
constexpr double kMadWidth = 5.0;
constexpr double kMinBand = 0.02;
SteadyState steady_state(const std::vector<double>& series);

}  // namespace laptime::trace
