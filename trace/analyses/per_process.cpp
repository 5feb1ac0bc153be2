#include "trace/analyses/per_process.h"

#include <utility>

#include "trace/model/error.h"

namespace laptime::trace {

std::string several_processes_tail(const Trace& t, const ProcessChoice& procs) {
  return "; the trace holds " + std::to_string(procs.reported.size()) + " processes with iterations (" +
         process_list(t, procs.reported, 6) + "): name one with --pid N.";
}

ProcessReports analyze_per_process(const TraceJoin& j, const ReportOptions& o, const ProcessChoice& procs) {
  const Trace& t = j.trace();
  const size_t n = procs.reported.size();
  if (n > kMaxProcessesReported)
    throw TraceError("too many processes to report one by one" + several_processes_tail(t, procs));
  ProcessReports out;
  auto add = [&](uint32_t pid, const IterationSet& set) {
    ProcessReport r;
    r.pid = pid;
    r.a = analyze(j, o, set);
    r.settling = iteration_settling(r.a);
    if (!r.settling.warning.empty()) r.a.notes.push_back(r.settling.warning);
    if (!r.settling.shifts.empty()) r.a.notes.push_back(r.settling.shifts);
    out.each.push_back(std::move(r));
  };
  if (n == 0) add(0, find_iterations(j, o.range));  // the whole trace: its sentence says why
  for (const ProcessIterations& p : procs.reported) {
    try {
      add(p.pid, p.set);
    } catch (const TraceError& e) {
      if (n == 1) throw;
      throw TraceError("process " + process_label(t, p.pid) + ": " + e.what());
    }
  }
  std::vector<std::string>& notes = n > 1 ? out.notes : out.each.front().a.notes;
  if (n > 1) notes.push_back(procs.summary);
  notes.insert(notes.end(), procs.notes.begin(), procs.notes.end());
  return out;
}

ProcessReports analyze_per_process(const TraceJoin& j, const ReportOptions& o) {
  return analyze_per_process(j, o, choose_processes(j, o.range, o.pid));
}

}  // namespace laptime::trace
