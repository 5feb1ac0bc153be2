// Question 2: how busy is the GPU inside an iteration, and where does it idle?
//
// An iteration's GPU work is what its launch calls put in a queue (joined by correlation id),
// wherever it ran; its span runs from the first start to the last end. Busy time is the union
// of the kernel, copy and memset intervals over the span; every idle stretch is either the GPU
// waiting for the host (the next work's launch call had not returned when the GPU ran dry) or
// waiting with work queued. Stretches longer than --gap-us are gaps, each with what the
// launching thread was doing meanwhile. The idle time between iterations is summed in
// iteration_statistics (iterations.h), which knows which iterations are consecutive.
#pragma once

#include <utility>
#include <vector>

#include "trace/iterations.h"
#include "trace/report.h"

namespace laptime::trace {

// The GPU work launched inside each iteration: indices into j.ops(), by start.
std::vector<std::vector<int>> ops_by_iteration(const TraceJoin& j, const IterationSet& s);

// Fills each iteration's GPU span, busy and host-wait time; returns every gap over the
// threshold with the position of its iteration (steady or not: that is known later).
std::vector<std::pair<int, Gap>> gpu_spans_and_gaps(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                                                    const ReportOptions& o, Analysis& a);

// Keeps the gaps of steady iterations, largest first, and totals the host-wait idle time.
void keep_steady_gaps(std::vector<std::pair<int, Gap>> gaps, Analysis& a);

}  // namespace laptime::trace
