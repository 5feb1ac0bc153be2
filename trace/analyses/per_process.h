// One trace, every process with a loop analyzed on its own: what `laptime analyze FILE` reports
// (one process's analysis as it always was, or one per process, trace/analyses/processes.h), and
// what each report of a job is (trace/compare/job.h), so that a report's lap in the job view is its
// single-file analysis exactly: both come from here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analyses/analysis.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/iterations.h"
#include "trace/analyses/processes.h"

namespace laptime::trace {

// One process's analysis (or the whole trace's, pid 0, when no process qualifies on its own).
struct ProcessReport {
  uint32_t pid = 0;
  Analysis a;
  IterationSettling settling;  // its warning and its level shifts, if any, are in a.notes too
};

struct ProcessReports {
  std::vector<ProcessReport> each;
  // With several processes: the sentence that says so, then those left out (said once, above
  // the sections; with one, these notes are in its analysis's notes).
  std::vector<std::string> notes;
};

// `procs`: choose_processes(j, o.range, o.pid). Throws TraceError for more processes than
// kMaxProcessesReported, and for a process whose analysis fails ("process 4200 (python): ...",
// the sentence alone when it is the only one).
ProcessReports analyze_per_process(const TraceJoin& j, const ReportOptions& o, const ProcessChoice& procs);
ProcessReports analyze_per_process(const TraceJoin& j, const ReportOptions& o);

// "; the trace holds 3 processes with iterations (...): name one with --pid N.", the end of a
// sentence that refuses what needs one process.
std::string several_processes_tail(const Trace& t, const ProcessChoice& procs);

}  // namespace laptime::trace
