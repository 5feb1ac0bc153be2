#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace laptime {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

Stats stats_of(const std::vector<double>& v) {
  Stats s{};
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  s.median = percentile(v, 0.5);
  s.p10 = percentile(v, 0.1);
  s.p90 = percentile(v, 0.9);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / (v.size() - 1)) : 0.0;
  return s;
}

std::string steady_summary(const std::vector<double>& laps, int requested, bool interrupted, int iterations_done) {
  char line[512];
  if (laps.empty() && iterations_done == 0) return "  interrupted before the first iteration: no statistics";
  if (laps.empty()) {
    std::snprintf(line, sizeof line,
                  "  interrupted after %d iteration%s, all warm-up: no steady-state statistics", iterations_done,
                  iterations_done == 1 ? "" : "s");
    return line;
  }
  const Stats s = stats_of(laps);
  std::string text;
  if (interrupted) {
    std::snprintf(line, sizeof line, "  interrupted: %zu of %d steady iterations done\n", laps.size(), requested);
    text = line;
  }
  std::snprintf(line, sizeof line,
                "  steady state over %zu iterations (ms): mean %.3f  median %.3f  p10 %.3f  p90 %.3f  min %.3f  "
                "max %.3f  stddev %.3f",
                laps.size(), s.mean, s.median, s.p10, s.p90, s.min, s.max, s.stddev);
  return text + line;
}

}  // namespace laptime
