// How `laptime lab` checks and times one version on a case (bench/lab/case.h).
//
// The check: the outputs poisoned (every byte 0xff: NaN), one call, every output element must be
// finite (an element the version forgot to write is still NaN) and the guards around each output
// intact (bench/lab/case.h: a write past either end), then the relative L2 error
// ‖out − ref‖ / ‖ref‖ (‖ref‖ taken as 1 when it is 0; each |ref| at least the version's error
// floor where the registry gives one) over the rows compared: all of them up to the case's
// max_checked_rows, else the first, the last and rows drawn at random from the seed.
//
// The timing: each call is timed alone between two CUDA events, on inputs drawn afresh for it
// (so that no call can reuse an answer it kept from the one before) with its outputs poisoned.
// Cold: a write of twice the L2 cache's size (a memset) before the call, so that it starts cold,
// as it does in a model where the layer before streamed other data through the cache. Hot: no
// flush, the inputs just written and in L2 where they fit. Three untimed calls first (module
// loading, clocks; the last one's time sizes the batches), then batches of 25 (fewer, down to 5,
// for a version whose batch would pass half of max_seconds) until the 95% percentile-bootstrap
// interval of the median (core/stats.h's resampled medians, 2000 resamples) is within `target` of
// the median on each side (its half-width over the median), or after max_runs calls, or
// max_seconds (the stopping rule, stated in the report). The median, not the mean or the
// minimum: robust to a stray slow call, and what the bench reports for laps. After the timed
// calls the last one's output is checked against the reference of its inputs: a version right in
// the checks and wrong while timed fails.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bench/lab/case.h"
#include "bench/lab/result.h"
#include "core/buffer.h"
#include "core/context.h"

namespace laptime::lab {

// `floor`: each reference value counts in ‖ref‖ as at least this magnitude (KernelInfo::error_floor).
CheckRow check_version(LabCase& c, int index, const Context& ctx, double bound, uint64_t seed, double floor = 0);
// The check of what the case's outputs hold now against the reference of its inputs as read last
// (check_version after its call; the last timed call's output).
CheckRow compare_outputs(LabCase& c, cudaStream_t stream, double bound, uint64_t seed, double floor = 0);

// A buffer of twice the device's L2 cache (at least 64 MiB), written to evict it.
class L2Flush {
 public:
  explicit L2Flush(const Context& ctx);
  void run(cudaStream_t stream) const;
  std::size_t bytes() const { return buf_.bytes(); }

 private:
  DeviceBuffer buf_;
};

struct TimingPolicy {
  double target = 0.01;  // relative half-width of the interval
  int min_runs = 25, max_runs = 2000;
  double max_seconds = 1.5;
};

struct Timing {
  int runs = 0;
  bool converged = false;
  double median_ms = 0, lo_ms = 0, hi_ms = 0;
};

// The stopping rule of a policy, one sentence for the report.
std::string stopping_rule(const TimingPolicy& p);

// `call` enqueues one call on ctx's stream; `before` enqueues what precedes each call outside the
// timing (fresh inputs, poisoned outputs); `flush` nullptr times the calls hot.
Timing time_calls(const Context& ctx, const std::function<void()>& call, const std::function<void()>& before,
                  const L2Flush* flush, const TimingPolicy& p, uint64_t seed);

// The median of `ms` and its 95% percentile-bootstrap interval (2000 resamples from `seed`).
Timing median_interval(std::vector<double> ms, uint64_t seed);

}  // namespace laptime::lab
