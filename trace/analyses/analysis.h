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

struct Analysis : Iterations, Utilization, KernelMix, Synchronizations {
  std::shared_ptr<NamePool> names;  // the trace's: the Names in gaps and calls point into it
  std::string source;
  std::string gpu;                   // "NVIDIA H200, 132 SMs", when the capture recorded it
  std::vector<std::string> notes;    // the reader's notes and the analysis's own
  DroppedRows dropped;               // rows the reader left out as invalid (Trace::dropped)
  std::optional<int> top;            // rows the tables show (ReportOptions::top, trace/analyses/top.h)
  Program program = Program::Other;  // who made the trace: the verdict's advice is in its terms

  Bound bound = Bound::NoGpuWork;
  std::string verdict;  // plain words, several sentences

  Timeline timeline;  // the median steady iteration's events, for the report page (timeline.h)
};

}  // namespace laptime::trace
