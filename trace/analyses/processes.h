// Several processes in one capture: two ranks of one training job, or two programs sharing a
// GPU, each running its own loop. Read as one, their iteration ranges interleave (two loops of
// 0.100 ms each look like one of 0.050 ms) and each one's idle GPU time is hidden by the other's
// kernels. So analyze and diff find the iterations of each process on its own
// (iterations_by_process, trace/analyses/iterations.h) and report each process separately, or the one
// --pid names.
//
// Which processes are reported: those whose own iteration ranges hold GPU launches (a loader
// process numbering its batches with no GPU work is not a loop to measure); when none does,
// those with iteration ranges at all. A process whose ranges tie between two families, one with
// iterations but no GPU work, and one that launched GPU work with no iteration ranges are left
// out, each with a note that says so. Each reported process's GPU time is its own work only:
// the GPU work an iteration holds is what its launch calls (on that process's threads, joined by
// pid and correlation id) put in a queue, never another process's kernels running meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

struct ProcessChoice {
  // Ascending by pid. Empty: no process's ranges qualify on their own, and the search over the
  // whole trace (find_iterations without a pid) gives the reason.
  std::vector<ProcessIterations> reported;
  std::vector<std::string> notes;  // the processes left out and why, one sentence each
  // With more than one reported: "2 processes with iterations: 4100 (python), 4200 (python);
  // each reported on its own; --pid N for one." ("" otherwise).
  std::string summary;
};

// `pid` set: that process alone (TraceError naming the processes that have iterations when it
// has none, or when the trace holds no such process).
ProcessChoice choose_processes(const TraceJoin& j, const std::string& range, std::optional<uint32_t> pid);

// "4100 (python) and 4200 (python)"; more than `shown` end with "and N more".
std::string process_list(const Trace& t, const std::vector<ProcessIterations>& ps, size_t shown = 8);

// On a GPU the processes share, part of one process's idle time inside its iterations is the
// GPU running another's kernels: that time, summed over the steady iterations (the measure of
// the other processes' GPU work inside each iteration's span, less where the iteration's own
// work ran too).
Ns other_processes_in_idle(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                           const std::vector<Iteration>& iterations, uint32_t pid);
// The note that says so, when it is more than 1% of `idle` (the steady iterations' idle time
// inside their spans); "" otherwise, and for every capture of one process.
std::string shared_gpu_note(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                            const std::vector<Iteration>& iterations, uint32_t pid, Ns idle);

// More processes than this are not reported one by one without --pid: each costs a pass over
// the trace, and a report of hundreds of sections is no answer.
constexpr size_t kMaxProcessesReported = 32;

}  // namespace laptime::trace
