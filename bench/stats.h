// The statistics `laptime bench` reports over its steady-state laps, and the one-line
// summary of them, host-only so they are tested without a GPU (tests/test_cli.cpp) and
// shared by a complete run and one cut short by Ctrl-C.
#pragma once

#include <string>
#include <vector>

namespace laptime {

struct Stats {
  double mean, median, p10, p90, min, max, stddev;
};

// q in [0, 1], linear interpolation between ranks. v must not be empty.
double percentile(std::vector<double> v, double q);
// v must not be empty; stddev is the sample standard deviation (0 for one value).
Stats stats_of(const std::vector<double>& v);

// The statistics line: "steady state over 20 iterations (ms): mean ... stddev ...", or, for a
// run interrupted after `measured` of `requested` steady iterations, says so first. With no
// steady lap at all (interrupted during warm-up) it says there are no statistics.
std::string steady_summary(const std::vector<double>& laps, int requested, bool interrupted, int iterations_done);

}  // namespace laptime
