#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace laptime::stats {

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  s.median = median(v);
  s.min = v.front();
  s.max = v.back();
  s.p10 = percentile_sorted(v, 0.1);
  s.p90 = percentile_sorted(v, 0.9);
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / (v.size() - 1)) : 0.0;
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (v.size() % 2) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + mid);
  return (lower + upper) / 2;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, q);
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * (sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

double mad(const std::vector<double>& v) {
  const double m = median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return median(std::move(dev));
}

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same numbers everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // An index in [0, n): the high 64 bits of a 64x64 product (Lemire), bias below 2^-40 for
  // the list sizes here.
  size_t below(size_t n) { return static_cast<size_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

 private:
  uint64_t state_;
};

double resampled_median(const std::vector<double>& v, SplitMix64& rng, std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (double& x : scratch) x = v[rng.below(v.size())];
  return median(scratch);
}

}  // namespace

Interval bootstrap_median_change(const std::vector<double>& before, const std::vector<double>& after,
                                 int resamples, uint64_t seed, double level) {
  Interval ci;
  if (before.empty() || after.empty() || resamples <= 0) return ci;
  SplitMix64 rng(seed);
  std::vector<double> diffs, scratch;
  diffs.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    const double b = resampled_median(before, rng, scratch);
    const double a = resampled_median(after, rng, scratch);
    diffs.push_back(a - b);
  }
  std::sort(diffs.begin(), diffs.end());
  const double tail = (1 - level) / 2;
  ci.lo = percentile_sorted(diffs, tail);
  ci.hi = percentile_sorted(diffs, 1 - tail);
  return ci;
}

SteadyState steady_state(const std::vector<double>& series) {
  SteadyState s;
  const size_t n = series.size();
  if (n == 0) return s;
  const std::vector<double> last_half(series.begin() + n / 2, series.end());
  s.median = median(last_half);
  s.band = std::max(kMadWidth * 1.4826 * mad(last_half), kMinBand * std::fabs(s.median));
  auto outside = [&](double x) { return std::fabs(x - s.median) > s.band; };
  for (size_t i = 0; i < n / 2; ++i)
    if (outside(series[i])) s.start = i + 1;
  for (size_t i = s.start; i < n; ++i) s.outside_late += outside(series[i]) ? 1 : 0;
  return s;
}

}  // namespace laptime::stats
