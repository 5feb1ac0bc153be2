// Question 4: does the loop synchronize, and what does each synchronization cost?
//
// Blocking calls are found by name (device/stream/event synchronize, cudaMemcpy without
// Async, allocations and frees), by the copy records (an "Async" copy from or to pageable
// memory blocks the host all the same) and by CUPTI's synchronization records. Each one inside
// a steady iteration is then measured against the compute stream (the stream that ran most
// of the steady iterations' GPU time):
//   - stall: work launched earlier on the compute stream was still pending when the call
//     began, and the call returned only once it had ended: the host waited for the forward
//     pass, and the GPU restarts from an empty queue;
//   - returned at once: compute-stream work was pending and the call returned before it
//     ended: it did not wait for the forward pass (a blocking call on a stream that does not
//     order with the compute stream), so a value read this way can be stale;
//   - queue empty: nothing was pending on the compute stream; the call cost its own time.
// The cost is the host's measured wait per iteration; the lap without it is estimated as the
// larger of the GPU's busy time and the host's lap less that wait.
#pragma once

#include <vector>

#include "trace/iterations.h"
#include "trace/report.h"

namespace laptime::trace {

// Fills a.compute_stream, a.syncs, a.sync_summary, a.syncs_elsewhere and the cost figures.
// Needs the steady iterations, their lap and their GPU busy time (iteration_statistics).
void synchronizations(const TraceJoin& j, const IterationSet& s, const std::vector<std::vector<int>>& ops_of,
                      Analysis& a);

}  // namespace laptime::trace
