#include "trace/analyses/processes.h"

#include <algorithm>
#include <map>
#include <set>

#include "trace/model/error.h"
#include "trace/model/format.h"

namespace laptime::trace {

std::string process_list(const Trace& t, const std::vector<ProcessIterations>& ps, size_t shown) {
  std::string list;
  for (size_t i = 0; i < ps.size() && i < shown; ++i) list += (i ? ", " : "") + process_label(t, ps[i].pid);
  if (ps.size() > shown) list += " and " + std::to_string(ps.size() - shown) + " more";
  return list;
}

namespace {

bool trace_holds_process(const TraceJoin& j, uint32_t pid) {
  const Trace& t = j.trace();
  for (const NvtxEvent& r : t.nvtx)
    if (r.pid == pid) return true;
  for (const ApiCall& c : t.api_calls)
    if (c.pid == pid) return true;
  for (const GpuOp& op : j.ops())
    if (op.pid == pid) return true;
  return false;
}

// --pid N: that process, or one sentence saying why not and which processes have iterations.
ProcessChoice chosen_process(const TraceJoin& j, const std::string& range, uint32_t pid,
                             std::vector<ProcessIterations> all) {
  const Trace& t = j.trace();
  ProcessChoice c;
  std::vector<ProcessIterations> ok;
  for (ProcessIterations& p : all) {
    if (p.pid == pid) {
      if (!p.error.empty()) throw TraceError(p.error);
      c.reported.push_back(std::move(p));
      return c;
    }
    if (p.error.empty()) ok.push_back(std::move(p));
  }
  const std::string others = ok.empty() ? "" : "; the processes with iterations are " + process_list(t, ok);
  if (!trace_holds_process(j, pid))
    throw TraceError("the trace holds no process " + std::to_string(pid) + others + ".");
  // It is there, with no candidate range: find_iterations says why in its words.
  try {
    ProcessIterations p;
    p.pid = pid;
    p.set = find_iterations(j, range, pid);
    c.reported.push_back(std::move(p));
    return c;
  } catch (const TraceError& e) {
    std::string why = e.what();
    if (!others.empty() && !why.empty() && why.back() == '.') why.pop_back();
    throw TraceError(why + (others.empty() ? "" : others + "."));
  }
}

}  // namespace

Ns other_processes_in_idle(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                           const std::vector<Iteration>& iterations, uint32_t pid) {
  // The other processes' work as disjoint intervals, by start (the ops are by start: one pass).
  std::vector<std::pair<Ns, Ns>> other;
  for (const GpuOp& op : j.ops()) {
    if (op.pid == pid) continue;
    if (!other.empty() && op.start <= other.back().second)
      other.back().second = std::max(other.back().second, op.end);
    else
      other.emplace_back(op.start, op.end);
  }
  if (other.empty()) return 0;
  // The measure of `other` inside [lo, hi): its intervals are disjoint and sorted, ends too.
  auto inside = [&](Ns lo, Ns hi) {
    Ns sum = 0;
    auto it = std::upper_bound(other.begin(), other.end(), lo, [](Ns v, const auto& x) { return v < x.second; });
    for (; it != other.end() && it->first < hi; ++it) sum += std::min(hi, it->second) - std::max(lo, it->first);
    return sum;
  };
  Ns total = 0;
  for (size_t i = 0; i < iterations.size(); ++i) {
    const Iteration& it = iterations[i];
    if (!it.steady() || !it.has_gpu) continue;
    Ns in_span = inside(it.gpu_start, it.gpu_end), under_own = 0;
    // Less where the iteration's own work ran: its ops are by start, merged as they come.
    Ns lo = 0, hi = -1;
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      if (hi >= lo && op.start <= hi) {
        hi = std::max(hi, op.end);
        continue;
      }
      if (hi > lo) under_own += inside(lo, hi);
      lo = op.start;
      hi = op.end;
    }
    if (hi > lo) under_own += inside(lo, hi);
    total += in_span - under_own;
  }
  return total;
}

std::string shared_gpu_note(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                            const std::vector<Iteration>& iterations, uint32_t pid, Ns idle) {
  if (idle <= 0) return "";
  const Ns other = other_processes_in_idle(j, ops_of, iterations, pid);
  if (other * 100 <= idle) return "";
  return detail::format(
      "Other processes' GPU work ran during %.0f%% of this process's idle time inside its steady "
      "iterations (%.3f ms of %.3f ms, all steady iterations): the GPU is shared, so the idle time, the gaps and the "
      "verdict below include time the GPU spent on their kernels.",
      100.0 * other / idle, other / 1e6, idle / 1e6);
}

ProcessChoice choose_processes(const TraceJoin& j, const std::string& range, std::optional<uint32_t> pid) {
  const Trace& t = j.trace();
  std::vector<ProcessIterations> all = iterations_by_process(j, range);
  if (pid) return chosen_process(j, range, *pid, std::move(all));

  ProcessChoice c;
  std::vector<ProcessIterations> ok, no_gpu, refused;
  for (ProcessIterations& p : all) (p.error.empty() ? (p.gpu_launches ? ok : no_gpu) : refused).push_back(std::move(p));
  if (ok.empty()) ok.swap(no_gpu);  // no process launches inside its ranges: those with ranges at all
  if (ok.empty()) return c;         // the search over the whole trace says why there are none
  std::set<uint32_t> named;         // processes the report or a note already speaks of
  for (const auto* list : {&ok, &no_gpu, &refused})
    for (const ProcessIterations& p : *list) named.insert(p.pid);
  for (const ProcessIterations& p : refused)
    c.notes.push_back("Process " + process_label(t, p.pid) + " is not reported: " + p.error);
  for (const ProcessIterations& p : no_gpu)
    c.notes.push_back("Process " + process_label(t, p.pid) + " is not reported: its `" + detail::clip(p.set.name) +
                      "` ranges hold no GPU launches (--pid " + std::to_string(p.pid) + " to report it).");
  std::map<uint32_t, size_t> ops_elsewhere;  // GPU work of processes with no iteration ranges
  for (const GpuOp& op : j.ops())
    if (!named.count(op.pid)) ++ops_elsewhere[op.pid];
  for (const auto& [other, n] : ops_elsewhere)
    c.notes.push_back("Process " + process_label(t, other) + " ran " +
                      detail::plural(n, "GPU operation", "GPU operations") +
                      " but has no iteration ranges: its work is not in this report.");
  c.reported = std::move(ok);
  if (c.reported.size() > 1)
    c.summary = std::to_string(c.reported.size()) + " processes with iterations: " + process_list(t, c.reported) +
                "; each reported on its own; --pid N for one.";
  return c;
}

}  // namespace laptime::trace
