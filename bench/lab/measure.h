// How `laptime lab` checks and times one version on a case (bench/lab/case.h).
//
// The check: the outputs poisoned (every byte 0xff: NaN), one call, every output element must be
// finite (an element the version forgot to write is still NaN), then the relative L2 error
// ‖out − ref‖ / ‖ref‖ (‖ref‖ taken as 1 when it is 0; each |ref| at least the version's error
// floor where the registry gives one) over the rows compared: all of them up to
// the case's max_checked_rows, else the first, the last and rows drawn at random from the seed.
//
// The timing: each call is timed alone between two CUDA events, after a write of twice the L2
// cache's size (a memset) so that it starts cold, as it does in a model where the layer before
// streamed other data through the cache. Three untimed calls first (module loading, clocks; the
// last one's time sizes the batches), then batches of 25 (fewer, down to 5, for a version whose
// batch would pass half of max_seconds) until the 95% percentile-bootstrap interval of the
// median (core/stats.h's resampled medians, 2000 resamples) is within `target` of the median on
// each side (its half-width over the median), or after max_runs calls, or max_seconds. The
// median, not the mean or the minimum: robust to a stray slow call, and what the bench reports
// for laps.
#pragma once

#include <cstdint>
#include <functional>

#include "bench/lab/case.h"
#include "bench/lab/result.h"
#include "core/buffer.h"
#include "core/context.h"

namespace laptime::lab {

// `floor`: each reference value counts in ‖ref‖ as at least this magnitude (KernelInfo::error_floor).
CheckRow check_version(LabCase& c, int index, const Context& ctx, double bound, uint64_t seed, double floor = 0);

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

// `call` enqueues one call on ctx's stream.
Timing time_calls(const Context& ctx, const std::function<void()>& call, const L2Flush& flush, const TimingPolicy& p,
                  uint64_t seed);

// The median of `ms` and its 95% percentile-bootstrap interval (2000 resamples from `seed`).
Timing median_interval(std::vector<double> ms, uint64_t seed);

}  // namespace laptime::lab
