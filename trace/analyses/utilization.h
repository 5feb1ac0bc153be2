// Question 2: how busy is the GPU inside an iteration, and where does it idle?
//
// An iteration's GPU work is what its launch calls put in a queue (joined by correlation id),
// wherever it ran; its span runs from the first start to the last end. Busy time is the union
// of the kernel, copy and memset intervals over the span; every idle stretch is either the GPU
// waiting for the host (the next work's launch call had not returned when the GPU ran dry) or
// waiting with work queued. Stretches longer than --gap-us are gaps, each with what the
// launching thread was doing meanwhile. Between two consecutive steady iterations, the GPU's
// idle time is summed, and the part of it the host spent outside both ranges (the loop body
// between forwards: loading the next batch, logging) is the wait for input.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

enum class GapCause {
  HostWait,  // the next work's launch call had not returned when the GPU went idle: it waited for the CPU
  Other,     // the work was already enqueued (dependency, sync, kernel-boundary latency)
};
const char* gap_cause_name(GapCause c);

struct Gap {
  uint64_t iteration = 0;
  Ns start = 0, end = 0;
  GapCause cause = GapCause::Other;
  // Names point into the trace's pool (Analysis::names keeps it alive): a gap per kernel of a
  // kernel named by a megabyte costs a pointer, not a copy.
  Name before;          // the GPU work that ended at the gap's start
  Name after;           // the GPU work that started at its end
  Name launch;          // the API call that launched `after`
  Ns launch_start = 0;  // when that call began
  Name cpu_api;         // the API call on the launching thread that overlapped the gap most
  Ns cpu_in_cuda = 0;   // how much of the gap that thread spent inside CUDA calls
  Name cpu_range;       // the innermost NVTX range on that thread over the gap's middle
  Ns duration() const { return end - start; }
};

// Question 2's answer (a part of trace/analyses/analysis.h's Analysis); each iteration's own GPU span,
// busy and idle times are in its Iteration.
struct Utilization {
  double gap_threshold_us = 0;
  std::vector<Gap> gaps;      // every gap over steady iterations, largest first
  Ns idle_in_iterations = 0;  // idle time inside the GPU spans
  Ns host_wait_idle = 0;      // the part of it waiting for a launch call to return (any length)
  Ns between_iterations = 0;  // GPU idle between consecutive steady iterations, summed
  Ns input_wait = 0;          // the part of it while the host was outside the iteration ranges
};

// The union of one iteration's GPU intervals, `ops` (indices into j.ops(), by start), in one
// pass: `idle(from, k, last)` is called for every stretch in which nothing ran, from `from` to the
// start of j.ops()[k], `last` being the op whose end is `from`. Returns the busy time and the end
// of the last interval. gpu_spans_and_gaps and the synchronizations (sync.h) both walk it.
template <class Idle>
std::pair<Ns, Ns> walk_union(const TraceJoin& j, const std::vector<int>& ops, Idle&& idle) {
  Ns busy = 0, cur_end = ops.empty() ? 0 : j.ops()[ops.front()].start;
  int cur_last = -1;  // the op whose end is cur_end
  for (int k : ops) {
    const GpuOp& op = j.ops()[k];
    if (cur_last >= 0 && op.start > cur_end) idle(cur_end, k, cur_last);
    if (cur_last < 0 || op.start > cur_end) {
      busy += op.end - op.start;
      cur_end = op.end;
      cur_last = k;
    } else if (op.end > cur_end) {
      busy += op.end - cur_end;
      cur_end = op.end;
      cur_last = k;
    }
  }
  return {busy, cur_end};
}

// Every idle stretch, however short, is either the GPU waiting for the host, or waiting with its
// next work already queued. The work is queued once its launch call has returned: a launch that
// began just before the GPU ran dry at `idle_from` but returned after it still kept the GPU waiting
// (that is what a launch-bound loop looks like).
inline bool waits_for_launch(const TraceJoin& j, const GpuOp& next, Ns idle_from) {
  return next.api >= 0 && j.trace().api_calls[next.api].end > idle_from;
}

// Of the GPU's idle between two consecutive iterations (prev's last GPU work to it's first), the
// part the host spent outside both ranges: the loop body between forwards (loading the next batch,
// logging) holds the GPU up. 0 when there is no such idle.
inline Ns input_part(const Iteration& prev, const Iteration& it) {
  const Ns lo = std::max(prev.gpu_end, prev.end), hi = std::min(it.gpu_start, it.start);
  return hi > lo ? hi - lo : 0;
}

// The GPU work launched inside each iteration: indices into j.ops(), by start.
std::vector<std::vector<int>> ops_by_iteration(const TraceJoin& j, const IterationSet& s);

// Fills each iteration's GPU span, busy and host-wait time; returns every gap longer than
// `gap_us` microseconds with the position of its iteration (steady or not: that is known
// later).
std::vector<std::pair<int, Gap>> gpu_spans_and_gaps(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                                                    double gap_us, std::vector<Iteration>& iterations);

// Once the steady iterations are known (iterations.h): keeps their gaps, largest first,
// counts them per iteration, and totals the idle time inside and between them.
void steady_idle(std::vector<std::pair<int, Gap>> gaps, std::vector<Iteration>& iterations, Utilization& out);

}  // namespace laptime::trace
