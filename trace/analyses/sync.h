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
// larger of the GPU's busy time and the host's lap less that wait. What a stall costs the GPU is
// the idle that follows it: the GPU has run everything queued before the call, and the thread
// that would enqueue more is still in the call. An idle stretch of the steady iterations (as
// utilization.h finds them) is the synchronizations' when its next work's launch call had not
// returned when the GPU ran dry and the thread making it was then inside a stall (from the call's
// start to 2 us after its end, the clock slack); between two iterations, the stretch less its
// input part.
// The verdict (report.h) weighs that against the other idle.
//
// Where they sit: the innermost NVTX range around each call (an iteration range by the
// iterations' name), block indices folded as the by-layer table folds them (fold_block_indices:
// h.3.attn -> h.*.attn); a pattern that holds one range only keeps that range's name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"
#include "trace/analyses/utilization.h"

namespace laptime::trace {

enum class SyncKind { DeviceSync, StreamSync, EventSync, BlockingCopy, PageableCopy, Allocation };
const char* sync_kind_name(SyncKind k);

// What a blocking call did, measured against the compute stream (see above).
enum class SyncEffect {
  Stall,           // compute-stream work was pending and the call returned after it ended
  ReturnedAtOnce,  // a read-back (synchronize, device-to-host copy) that returned while work was
                   // pending: it did not wait for the forward pass, the value can be stale
  NoWait,          // a call that reads nothing back (host-to-device copy, allocation) and
                   // returned while work was pending: it cost its own time
  QueueEmpty,      // nothing was pending on the compute stream: it cost its own time
  Unknown,         // no compute stream (no GPU work in the steady iterations)
};
const char* sync_effect_name(SyncEffect e);

// Where a blocking call sat against the loop: only a steady iteration's call is the loop's cost;
// the others (setup before the loop, warm-up, the synchronize after it) are told apart so that
// nothing draws or counts them as the loop's.
enum class SyncWhere {
  Steady,      // inside a steady iteration
  Warmup,      // inside a warm-up iteration
  HostAhead,   // inside an iteration the host ran ahead in (not steady: iterations.h)
  BeforeLoop,  // outside every iteration, before the first one starts
  Between,     // outside every iteration, between two of them
  AfterLoop,   // outside every iteration, once the last one has ended
};
// In words: "steady", "warm-up", "host ran ahead", "before the loop", "between iterations",
// "after the loop".
const char* sync_where_name(SyncWhere w);

struct SyncCall {
  SyncKind kind = SyncKind::DeviceSync;
  Name api;                // the trace's pool (Analysis::names keeps it alive)
  int64_t iteration = -1;  // its iteration's index, -1 outside every iteration
  bool warmup = false;     // inside an iteration that is not steady (warm-up, host ran ahead)
  SyncWhere where = SyncWhere::Steady;
  Name range;                  // innermost NVTX range around the call
  Ns start = 0, duration = 0;  // duration: how long the host waited in it
  std::string detail;          // copies: "HtoD 4.0 KiB pageable -> device"
  int64_t stream = -1;         // the stream it copied on or synchronized (-1: not recorded)
  SyncEffect effect = SyncEffect::Unknown;
  Ns pending = 0;  // compute-stream work still to run when the call began
};

// A place the calls sat in, and how many sat there (steady iterations).
struct SyncPlace {
  std::string name;  // a range, or the pattern of several (`h.*.attn`)
  size_t count = 0;
};

struct SyncSummary {
  SyncKind kind = SyncKind::DeviceSync;
  size_t count = 0;
  Ns blocked = 0;  // host time inside them
  Ns stalled = 0;  // the part inside calls that waited for the compute stream
  size_t stalls = 0, returned_at_once = 0;
  std::vector<std::string> ranges;  // where they sat, most frequent first
  std::vector<SyncPlace> places;    // the same, folded: most calls first, then first seen
};

// Question 4's answer (a part of trace/analyses/analysis.h's Analysis).
struct Synchronizations {
  bool has_api_trace = false;             // without CUDA API calls, syncs cannot be seen
  std::vector<SyncCall> syncs;            // inside steady iterations, costliest (longest host wait) first
  std::vector<SyncSummary> sync_summary;  // by kind, for those, the kind with the most host wait first
  std::vector<SyncCall> syncs_elsewhere;  // the same calls in warm-up or outside the iterations, likewise
  int64_t compute_stream = -1;            // the stream with most GPU time in steady iterations
  Ns sync_wait = 0;                       // host time in the blocking calls, steady iterations
  Ns sync_stall = 0;                      // the part that waited for the compute stream
  Ns sync_idle = 0;                       // GPU idle after the stalls (above), steady iterations
  std::vector<SyncPlace> sync_places;     // where the calls sat, every kind together
  double gpu_floor_ms = 0;                // GPU time per iteration if it never waited for the host:
                                          // busy plus the idle it has with work queued
  double lap_without_syncs_ms = 0;        // estimate: max(gpu_floor_ms, lap - wait per iteration)
};

// Fills `out` (has_api_trace aside: the caller knows it from the trace). Needs the steady
// iterations, their lap and GPU busy time (iteration_statistics) and their idle time
// (steady_idle).
void synchronizations(const TraceJoin& j, const IterationSet& s, const std::vector<std::vector<int>>& ops_of,
                      const Iterations& iterations, const Utilization& idle, Synchronizations& out);

}  // namespace laptime::trace
