#include "bench/stats.h"

#include <cstdio>

#include "core/stats.h"

namespace laptime {

std::string steady_summary(const std::vector<double>& laps, int requested, bool interrupted, int iterations_done) {
  char line[512];
  if (laps.empty() && iterations_done == 0) return "  interrupted before the first iteration: no statistics";
  if (laps.empty()) {
    std::snprintf(line, sizeof line, "  interrupted after %d iteration%s, all warm-up: no steady-state statistics",
                  iterations_done, iterations_done == 1 ? "" : "s");
    return line;
  }
  const stats::Summary s = stats::summarize(laps);
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
