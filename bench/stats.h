// The one-line summary of `laptime bench`'s steady-state laps, host-only so it is tested without
// a GPU (tests/test_cli.cpp) and shared by a complete run and one cut short by Ctrl-C. The
// statistics themselves are core/stats.h's, the same ones `laptime analyze` and `diff` use.
#pragma once

#include <string>
#include <vector>

namespace laptime {

// The statistics line: "steady state over 20 iterations (ms): mean ... stddev ...", or, for a
// run interrupted after `measured` of `requested` steady iterations, says so first. With no
// steady lap at all (interrupted during warm-up) it says there are no statistics.
std::string steady_summary(const std::vector<double>& laps, int requested, bool interrupted, int iterations_done);

}  // namespace laptime
