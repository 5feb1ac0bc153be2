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
  // Uniform in (0, 1): 53 random bits, offset by half a step so that log() never sees 0.
  double open01() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box-Muller, the cosine half).
  double normal() {
    const double r = std::sqrt(-2 * std::log(open01()));
    return r * std::cos(6.283185307179586 * open01());
  }
  // Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang 2000: a squeeze on a cubed normal).
  double gamma(double shape) {
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = open01();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
    }
  }
  // Beta(a, b) for a, b >= 1, as G_a / (G_a + G_b).
  double beta(double a, double b) {
    const double x = gamma(a), y = gamma(b);
    return x / (x + y);
  }

 private:
  uint64_t state_;
};

// floor(n u) for u in [0, 1], kept inside the list.
uint32_t rank_of(double u, size_t n) {
  const double r = std::floor(u * static_cast<double>(n));
  return static_cast<uint32_t>(std::min(r, static_cast<double>(n - 1)));
}

// The percentile of `v` at q as percentile_sorted() takes it, by selection (v is reordered).
double percentile_select(std::vector<double>& v, double q) {
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double x = v[lo];
  const double y = lo + 1 < v.size() ? *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end()) : x;
  return x + (pos - lo) * (y - x);
}

}  // namespace

SortedSample::SortedSample(std::vector<double> values, size_t zeros) : values_(std::move(values)), zeros_(zeros) {
  std::sort(values_.begin(), values_.end());
  negatives_ = static_cast<size_t>(std::lower_bound(values_.begin(), values_.end(), 0.0) - values_.begin());
}

double SortedSample::at(size_t rank) const {
  if (rank < negatives_) return values_[rank];
  if (rank < negatives_ + zeros_) return 0;
  return values_[rank - zeros_];
}

double SortedSample::median() const {
  const size_t n = size();
  if (n == 0) return 0;
  return n % 2 ? at(n / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
}

MedianDraws draw_resampled_medians(size_t n, int resamples, uint64_t seed) {
  MedianDraws d;
  d.n = n;
  if (n == 0 || resamples <= 0) return d;
  SplitMix64 rng(seed);
  const size_t k = n % 2 ? (n + 1) / 2 : n / 2;  // the (lower) middle order statistic, 1-based
  d.lo.reserve(static_cast<size_t>(resamples));
  d.hi.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    const double u = rng.beta(double(k), double(n - k + 1));  // U_(k) of n uniforms
    d.lo.push_back(rank_of(u, n));
    if (n % 2) {
      d.hi.push_back(d.lo.back());
    } else {  // U_(k+1): the least of the n - k uniforms above U_(k)
      const double next = u + (1 - u) * (1 - std::pow(rng.open01(), 1.0 / double(n - k)));
      d.hi.push_back(rank_of(next, n));
    }
  }
  d.min_lo = *std::min_element(d.lo.begin(), d.lo.end());
  d.max_hi = *std::max_element(d.hi.begin(), d.hi.end());
  return d;
}

Interval bootstrap_median_change(const SortedSample& before, const SortedSample& after, const MedianDraws& b,
                                 const MedianDraws& a, double level) {
  Interval ci;
  if (before.size() == 0 || after.size() == 0 || b.lo.empty() || a.lo.empty()) return ci;
  if (b.n != before.size() || a.n != after.size() || b.lo.size() != a.lo.size()) return ci;  // draws of other lists
  // Sorted lists: one value at both ends of the drawn ranks is one value at every drawn rank.
  if (before.at(b.min_lo) == before.at(b.max_hi) && after.at(a.min_lo) == after.at(a.max_hi)) {
    ci.lo = ci.hi = after.at(a.min_lo) - before.at(b.min_lo);
    return ci;
  }
  std::vector<double> diffs(b.lo.size());
  for (size_t r = 0; r < diffs.size(); ++r)
    diffs[r] = (after.at(a.lo[r]) + after.at(a.hi[r])) / 2 - (before.at(b.lo[r]) + before.at(b.hi[r])) / 2;
  const double tail = (1 - level) / 2;
  ci.lo = percentile_select(diffs, tail);
  ci.hi = percentile_select(diffs, 1 - tail);
  return ci;
}

uint64_t after_seed(uint64_t seed) { return SplitMix64(seed ^ 0xA5A5A5A5A5A5A5A5ull).next(); }

Interval bootstrap_median_change(const std::vector<double>& before, const std::vector<double>& after, int resamples,
                                 uint64_t seed, double level) {
  return bootstrap_median_change(SortedSample(before, 0), SortedSample(after, 0),
                                 draw_resampled_medians(before.size(), resamples, seed),
                                 draw_resampled_medians(after.size(), resamples, after_seed(seed)), level);
}

double ratio_of_sums(const std::vector<double>& num, const std::vector<double>& den) {
  double n = 0, d = 0;
  for (std::size_t i = 0; i < num.size() && i < den.size(); ++i) {
    n += num[i];
    d += den[i];
  }
  return d != 0 ? n / d : 0;
}

Interval bootstrap_ratio_change(const std::vector<double>& before_num, const std::vector<double>& before_den,
                                const std::vector<double>& after_num, const std::vector<double>& after_den,
                                int resamples, uint64_t seed, double level) {
  Interval ci;
  const std::size_t nb = std::min(before_num.size(), before_den.size()),
                    na = std::min(after_num.size(), after_den.size());
  if (nb == 0 || na == 0 || resamples <= 0) return ci;
  SplitMix64 rb(seed), ra(after_seed(seed));
  // One resample's ratio: as many blocks as the side has, drawn with replacement; false when
  // the drawn blocks' den is 0.
  const auto draw = [](SplitMix64& rng, const std::vector<double>& num, const std::vector<double>& den, std::size_t n,
                       double& ratio) {
    double sn = 0, sd = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const uint32_t k = rank_of(rng.open01(), n);
      sn += num[k];
      sd += den[k];
    }
    ratio = sd != 0 ? sn / sd : 0;
    return sd != 0;
  };
  std::vector<double> diffs;
  diffs.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    double b = 0, a = 0;
    const bool ok_b = draw(rb, before_num, before_den, nb, b);
    const bool ok_a = draw(ra, after_num, after_den, na, a);
    if (ok_b && ok_a) diffs.push_back(a - b);
  }
  if (diffs.empty()) return ci;
  const double tail = (1 - level) / 2;
  ci.lo = percentile_select(diffs, tail);
  ci.hi = percentile_select(diffs, 1 - tail);
  return ci;
}

namespace {

// max(kNoiseWidth · s, kMinBand · |m|): Settling's band around a level m.
double band_around(double m, double noise) { return std::max(kNoiseWidth * noise, kMinBand * std::fabs(m)); }

double median_of(const std::vector<double>& v, size_t from, size_t to) {
  return median(
      std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to)));
}

// Whether every value of v[from, to) lies within the band around their median.
bool settled_run(const std::vector<double>& v, size_t from, size_t to, double noise) {
  const double m = median_of(v, from, to), band = band_around(m, noise);
  for (size_t i = from; i < to; ++i)
    if (std::fabs(v[i] - m) > band) return false;
  return true;
}

}  // namespace

Settling settling(const std::vector<double>& series) {
  Settling s;
  const size_t n = series.size();
  if (n == 0) return s;
  std::vector<double> diffs;
  for (size_t i = n / 2 + 1; i < n; ++i) diffs.push_back(std::fabs(series[i] - series[i - 1]));
  s.noise = 1.4826 * median(std::move(diffs)) / std::sqrt(2.0);
  const size_t run = std::min(kSettledRun, n - n / 2);
  s.run = run;
  s.settles = false;
  for (size_t k = 0; k <= n / 2 && k + run <= n; ++k)
    if (settled_run(series, k, k + run, s.noise)) {
      s.settled = k;
      s.settles = true;
      break;
    }
  std::vector<size_t> at;  // the shifts' positions, ascending
  const size_t settled = s.settled;
  if (s.settles && settled > 0) {
    const double m = median_of(series, settled, settled + run), band = band_around(m, s.noise);
    const auto first = series.begin(), last = first + static_cast<std::ptrdiff_t>(settled);
    if (std::any_of(first, last, [&](double x) { return x > m + band; }))
      s.start = settled;  // something slow before the settled run: a transient, up to it
    else if (std::all_of(first, last, [&](double x) { return x < m - band; }))
      at.push_back(settled);  // only faster: the run started at another level (a clock or a power cap)
  }
  // Candidate shifts: positions whose run's median is beyond the band of the previous run's. A
  // step shows at several positions in a row (a run half over it has the new median already):
  // of those, the one that splits the stretch around them best, the least total distance of each
  // side from the median of its clean end.
  auto place = [&](size_t k1, size_t k2) {  // candidates k1 .. k2 - 1
    const size_t lo = k1 - run, hi = k2 - 1 + run;
    const double m_lo = median_of(series, lo, k1), m_hi = median_of(series, k2 - 1, hi);
    double cost = 0;  // of splitting at k1, then moved one position at a time
    for (size_t i = lo; i < hi; ++i) cost += std::fabs(series[i] - (i < k1 ? m_lo : m_hi));
    double least = cost;
    size_t where = k1;
    for (size_t k = k1 + 1; k < k2; ++k) {
      cost += std::fabs(series[k - 1] - m_lo) - std::fabs(series[k - 1] - m_hi);
      if (cost < least) {
        least = cost;
        where = k;
      }
    }
    at.push_back(where);
  };
  size_t first = 0;
  int sign_of_run = 0;
  for (size_t k = std::max(s.start, settled) + run; k + run <= n + 1; ++k) {
    int sign = 0;
    if (k + run <= n) {
      const double before = median_of(series, k - run, k), d = median_of(series, k, k + run) - before;
      sign = std::fabs(d) > band_around(before, s.noise) ? (d > 0 ? 1 : -1) : 0;
    }
    if (sign != sign_of_run) {
      if (sign_of_run != 0) place(first, k);
      first = k;
      sign_of_run = sign;
    }
  }
  // The stretches between them: a shift whose stretches' medians agree within the band goes.
  for (size_t i = 0; i < at.size();) {
    const size_t from = i ? at[i - 1] : s.start, to = i + 1 < at.size() ? at[i + 1] : n;
    const double before = median_of(series, from, at[i]), after = median_of(series, at[i], to);
    if (std::fabs(after - before) > band_around(before, s.noise)) {
      ++i;
      continue;
    }
    at.erase(at.begin() + static_cast<std::ptrdiff_t>(i));
    if (i) --i;  // the shift before it now has a longer stretch after it: measure it again
  }
  for (size_t i = 0; i < at.size(); ++i) {
    const size_t from = i ? at[i - 1] : s.start, to = i + 1 < at.size() ? at[i + 1] : n;
    s.shifts.push_back({at[i], median_of(series, from, at[i]), median_of(series, at[i], to)});
  }
  // The level (of the stretch the settled run begins) and the spikes, stretch by stretch.
  for (size_t i = 0; i <= at.size(); ++i) {
    const size_t from = i ? at[i - 1] : s.start, to = i < at.size() ? at[i] : n;
    if (from >= to) continue;
    const double m = median_of(series, from, to), band = band_around(m, s.noise);
    if (from <= settled && settled < to) {
      s.level = m;
      s.band = band;
    }
    for (size_t j = from; j < to; ++j) s.spikes += std::fabs(series[j] - m) > band ? 1 : 0;
  }
  return s;
}

}  // namespace laptime::stats
