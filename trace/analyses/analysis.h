// Everything `laptime analyze` found in a trace: one plain result, filled by analyze()
// (trace/analyses/analyze.h), read by every writer (text_report.h, json_report.h, svg.h, roofline.h,
// diff.h). Numbers in ns unless a name says otherwise.
//
// It is the four questions' answers side by side, each declared with the question that
// computes it (iterations.h, utilization.h, kernels.h, sync.h), so that a question module
// never includes anything above itself; this header adds what the run as a whole has: where
// it came from, the notes, and the verdict. Writers read `a.lap_ms` or `a.gaps` directly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/kernel_mix.h"
#include "trace/analyses/program.h"
#include "trace/analyses/sync.h"
#include "trace/analyses/timeline.h"
#include "trace/model/trace.h"
#include "trace/analyses/utilization.h"

namespace laptime::trace {

// The verdict's heading: the largest measured cause (docs/PROFILING.md §8.9 has the rule).
enum class Bound { GpuBound, SyncBound, LaunchBound, InputBound, Mixed, NoGpuWork };
const char* bound_name(Bound b);

// The verdict's numbers, as write_verdict weighs them (docs/PROFILING.md §8.9); the text and the
// JSON both read these. "Busy" has one meaning in every report: the share of the lap in which the
// GPU runs work, over the steady iterations together (their GPU spans plus the idle between
// consecutive ones); the share of one iteration's own GPU span is its "fill" (Iteration, span_fill).
struct VerdictFigures {
  bool measured = false;  // the steady iterations have GPU work: the figures below mean something
  Ns lap_ns = 0;          // the lap, steady iterations together: their GPU spans plus the idle between them
  Ns idle_ns = 0;         // the part of it in which the GPU runs nothing
  double busy_pct = 0;    // busy time over the lap
  double idle_pct = 0;    // 100 - busy_pct
  double input_pct = 0;   // of the lap: the host outside the ranges, and host-to-device copies (at most 100)
  // The idle time, by what the GPU waited for; the four add up to 100.
  double idle_launch_pct = 0;  // the host to return from a launch call (no stalling sync before it)
  double idle_sync_pct = 0;    // the host, after a synchronization that stalled it
  double idle_input_pct = 0;   // the host, busy outside the iteration ranges between iterations
  double idle_queued_pct = 0;  // nothing: work was queued (dependencies, kernel-boundary latency)
  // What the synchronizations cost the lap, estimated (Synchronizations::lap_without_syncs_ms).
  double saving_ms = 0, saving_pct = 0;
};

struct Analysis : Iterations, Utilization, KernelMix, Synchronizations {
  std::shared_ptr<NamePool> names;  // the trace's: the Names in gaps and calls point into it
  std::string source;
  std::string gpu;                   // "NVIDIA H200, 132 SMs", when the capture recorded it
  std::vector<std::string> notes;    // the reader's notes and the analysis's own
  DroppedRows dropped;               // rows the reader left out as invalid (Trace::dropped)
  std::optional<int> top;            // rows the tables show (ReportOptions::top, trace/analyses/top.h)
  Program program = Program::Other;  // who made the trace: the verdict's advice is in its terms

  Bound bound = Bound::NoGpuWork;
  VerdictFigures figures;
  std::string verdict;  // plain words, several sentences, from `figures` and the answers

  Timeline timeline;  // the median steady iteration's events, for the report page (timeline.h)
};

}  // namespace laptime::trace
