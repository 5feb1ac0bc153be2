#include "trace/analyses/utilization.h"

#include <algorithm>
#include <cmath>

#include "trace/model/format.h"

namespace laptime::trace {

const char* gap_cause_name(GapCause c) { return c == GapCause::HostWait ? "host-wait" : "other"; }

std::vector<std::vector<int>> ops_by_iteration(const TraceJoin& j, const IterationSet& s) {
  std::vector<std::vector<int>> ops_of(s.ranges.size());
  for (size_t i = 0; i < j.ops().size(); ++i) {
    const int it = s.iteration_of_call(j, j.ops()[i].api);
    if (it >= 0) ops_of[it].push_back(static_cast<int>(i));
  }
  return ops_of;
}

std::vector<std::pair<int, Gap>> gpu_spans_and_gaps(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                                                    double gap_us, std::vector<Iteration>& iterations) {
  const Trace& t = j.trace();
  std::vector<std::pair<int, Gap>> gaps;
  const Ns threshold = static_cast<Ns>(std::llround(gap_us * 1000));
  for (size_t i = 0; i < iterations.size(); ++i) {
    Iteration& it = iterations[i];
    const std::vector<int>& ops = ops_of[i];
    it.kernels = std::count_if(ops.begin(), ops.end(), [&](int k) { return j.ops()[k].kind == GpuOp::Kind::Kernel; });
    if (ops.empty()) continue;
    it.has_gpu = true;
    it.gpu_start = j.ops()[ops.front()].start;
    const NvtxEvent& ir = t.nvtx[it.nvtx];
    const auto [busy, gpu_end] = walk_union(j, ops, [&](Ns cur_end, int k, int cur_last) {
      const GpuOp& op = j.ops()[k];
      const Ns idle = op.start - cur_end;
      const bool host_wait = waits_for_launch(j, op, cur_end);
      if (host_wait) it.host_wait += idle;
      if (idle <= threshold) return;
      Gap g;
      g.iteration = it.index;
      g.start = cur_end;
      g.end = op.start;
      g.before = j.ops()[cur_last].label;
      g.after = op.label;
      uint32_t pid = ir.pid, tid = ir.tid;
      if (op.api >= 0) {
        const ApiCall& launch = t.api_calls[op.api];
        g.launch = launch.name;
        g.launch_start = launch.start;
        pid = launch.pid;
        tid = launch.tid;
        g.cause = host_wait ? GapCause::HostWait : GapCause::Other;
      }
      // What the launching thread was doing: the call overlapping the gap most. Calls
      // on one thread are sequential (or nested), so scanning back from the gap's end
      // stops at the first call that ended before the gap began.
      const ThreadCalls calls = j.thread_calls(pid, tid);
      auto pos =
          std::lower_bound(calls.begin(), calls.end(), g.end, [&](int c, Ns v) { return t.api_calls[c].start < v; });
      Ns best = 0, covered_until = g.end;
      while (pos != calls.begin()) {
        const ApiCall& c = t.api_calls[*--pos];
        const Ns overlap = std::min(c.end, g.end) - std::max(c.start, g.start);
        if (overlap > best) {
          best = overlap;
          g.cpu_api = c.name;
        }
        // Time inside any CUDA call, nested calls counted once (walking back in time).
        const Ns lo = std::max(c.start, g.start), hi = std::min(c.end, covered_until);
        if (hi > lo) {
          g.cpu_in_cuda += hi - lo;
          covered_until = lo;
        }
        if (c.end <= g.start) break;
      }
      g.cpu_range = detail::range_name(t, j.innermost_range(pid, tid, g.start + g.duration() / 2));
      gaps.emplace_back(static_cast<int>(i), std::move(g));
    });
    it.busy += busy;
    it.gpu_end = gpu_end;
  }
  return gaps;
}

void steady_idle(std::vector<std::pair<int, Gap>> gaps, std::vector<Iteration>& iterations, Utilization& out) {
  // Sized first, and the input freed before the sort's own buffer: a 5*10^6-kernel trace has
  // 10^5 gaps, and three copies of them were the analysis's largest transient.
  out.gaps.reserve(static_cast<size_t>(std::count_if(
      gaps.begin(), gaps.end(), [&](const std::pair<int, Gap>& g) { return iterations[g.first].steady(); })));
  for (auto& [i, g] : gaps) {
    Iteration& it = iterations[i];
    if (!it.steady()) continue;
    ++it.gaps;
    it.gap_time += g.duration();
    out.gaps.push_back(std::move(g));
  }
  std::vector<std::pair<int, Gap>>().swap(gaps);
  std::stable_sort(out.gaps.begin(), out.gaps.end(),
                   [](const Gap& x, const Gap& y) { return x.duration() > y.duration(); });
  const Iteration* prev = nullptr;  // the previous iteration, when it is steady too
  for (const Iteration& it : iterations) {
    if (!it.steady()) {
      prev = nullptr;
      continue;
    }
    out.host_wait_idle += it.host_wait;
    if (it.has_gpu) {
      out.idle_in_iterations += it.gpu_span() - it.busy;
      if (prev && prev->has_gpu && it.gpu_start > prev->gpu_end) {
        out.between_iterations += it.gpu_start - prev->gpu_end;
        // The host outside both iteration ranges while the GPU idled: the loop body between
        // forwards (loading the next batch, logging) holds the GPU up.
        out.input_wait += input_part(*prev, it);
      }
    }
    prev = &it;
  }
}

}  // namespace laptime::trace
