// analyze(): the four questions in order (iterations.h, utilization.h, kernels.h, sync.h),
// then the verdict in plain words.
#include "trace/analyses/analyze.h"

#include <algorithm>
#include <map>
#include <set>

#include "trace/analyses/graph.h"
#include "trace/analyses/iterations.h"
#include "trace/analyses/kernel_mix.h"
#include "trace/analyses/processes.h"
#include "trace/analyses/sync.h"
#include "trace/model/format.h"
#include "trace/analyses/utilization.h"

namespace laptime::trace {

using detail::format;
using detail::ms;

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::GpuBound:
      return "GPU-bound";
    case Bound::SyncBound:
      return "sync-bound";
    case Bound::LaunchBound:
      return "launch-bound";
    case Bound::InputBound:
      return "input-bound";
    case Bound::Mixed:
      return "mixed";
    case Bound::NoGpuWork:
      return "no GPU work";
  }
  return "?";
}

namespace {

// Where the synchronizations sit, for the verdict: the first few places with their counts, per
// iteration when every kind of call happens in every steady iteration (as the sentence counts
// them), else in all; one place alone needs no count.
std::string sync_places_text(const Analysis& a, bool every_iteration) {
  constexpr size_t kShown = 4;
  const std::vector<SyncPlace>& p = a.sync_places;
  if (p.size() == 1) return p.front().name;
  const double n = double(std::max<size_t>(a.steady_count, 1));
  std::string text;
  for (size_t i = 0; i < p.size() && i < kShown; ++i) {
    const std::string count = every_iteration ? format("%.3g", p[i].count / n) : std::to_string(p[i].count);
    const char* unit = i ? "" : every_iteration ? " per iteration" : p[i].count == 1 ? " call" : " calls";
    text += (i ? ", " : "") + p[i].name + ": " + count + unit;
  }
  if (p.size() > kShown) text += format(", and %zu more places", p.size() - kShown);
  return text;
}

// The synchronization part of the verdict: what blocks, what it costs, what would change.
std::string sync_verdict(const Analysis& a) {
  if (!a.has_api_trace) return " Synchronizations cannot be seen: the capture has no CUDA API calls.";
  if (a.syncs.empty()) return " No synchronization, blocking copy or allocation inside the loop.";
  const double n = double(std::max<size_t>(a.steady_count, 1));
  // Per API: a rate when it happens in every steady iteration, else where it happened (a
  // caching allocator growing in the first steady iteration is not a per-iteration cost).
  std::map<std::string, std::pair<size_t, std::set<int64_t>>> by_api;
  for (const SyncCall& s : a.syncs) {
    ++by_api[s.api].first;
    by_api[s.api].second.insert(s.iteration);
  }
  std::string every, some;
  for (const auto& [api, calls] : by_api) {
    const auto& [count, iterations] = calls;
    if (iterations.size() == a.steady_count) {
      every += (every.empty() ? "" : ", ") + format("%.3g ", count / n) + api;
    } else {
      std::vector<uint64_t> its(iterations.begin(), iterations.end());
      some += (some.empty() ? "" : ", ") + std::to_string(count) + " " + api + " in iteration" +
              (its.size() == 1 ? " " : "s ") + detail::number_runs(its);
    }
  }
  std::string v = " The loop synchronizes: " +
                  (every.empty() ? some : every + " per iteration" + (some.empty() ? "" : ", and " + some)) + " (in " +
                  sync_places_text(a, some.empty()) + ").";
  size_t stalls = 0, stale = 0;
  for (const SyncCall& s : a.syncs) {
    stalls += s.effect == SyncEffect::Stall;
    stale += s.effect == SyncEffect::ReturnedAtOnce;
  }
  const double wait_ms = a.sync_wait / 1e6 / n, stall_ms = a.sync_stall / 1e6 / n;
  if (stalls)
    v += format(
        " The host waits %.3f ms per iteration in them, %.3f ms of it for the compute stream's work to "
        "finish (%.3g %s per iteration: the host stops until the GPU drains, then the GPU restarts from "
        "an empty queue).",
        wait_ms, stall_ms, stalls / n, stalls == a.steady_count ? "stall" : "stalls");
  else
    v += format(" The host waits %.3f ms per iteration in them; none of them waited for the compute stream's work.",
                wait_ms);
  if (stale)
    v += format(
        " %.3g per iteration returned at once: it did not wait for the forward pass; a value read this way "
        "can be stale.",
        stale / n);
  if (stalls == 0 && stale == 0) v += " They did not wait for the GPU: each cost only its own time.";
  if (a.figures.saving_ms > 0)
    v += format(" Without them the lap would shrink by about %.3f ms (%.1f%%), from %.3f to %.3f ms (",
                a.figures.saving_ms, a.figures.saving_pct, a.lap_ms, a.lap_without_syncs_ms) +
         (a.lap_without_syncs_ms <= a.gpu_floor_ms + 1e-9
              ? format("the GPU's own time, %.3f ms per iteration without waiting for launches, bounds it).",
                       a.gpu_floor_ms)
              : "the host's lap less its wait; a lower bound: after a drained queue the host's own launches "
                "also run slower, which this capture alone cannot show).");
  else
    v += format(" The lap would hardly change without them (the GPU's own time, %.3f ms per iteration, bounds it).",
                a.gpu_floor_ms);
  return v;
}

// A remedy in the terms of the program that ran: laptime's flags, PyTorch's calls, CUDA's own.
struct Remedy {
  const char *laptime, *pytorch, *other;
  const char* for_program(Program p) const {
    return p == Program::Laptime ? laptime : p == Program::PyTorch ? pytorch : other;
  }
};

// What would take the launches off the critical path.
constexpr Remedy kLaunchRemedy{
    " Less host work per launch, fewer and larger kernels, or a CUDA Graph (`laptime bench --graph`) take the "
    "launches off the critical path.",
    " Fewer launches take them off the critical path: capture the step in a CUDA Graph (`torch.cuda.graphs`: "
    "torch.cuda.CUDAGraph or torch.cuda.make_graphed_callables), or let `torch.compile(mode=\"reduce-overhead\")` "
    "fuse kernels and capture the graph for you.",
    " Less host work per launch, fewer and larger kernels, or a CUDA Graph (capture the iteration's stream once, then "
    "one cudaGraphLaunch per iteration) take the launches off the critical path."};

// What lets the host enqueue ahead again after a synchronization that stalls it.
constexpr Remedy kSyncRemedy{
    " laptime's loop reads nothing back unless `--pitfall sync` asks it to: run without it, and the host enqueues "
    "ahead of the GPU again.",
    " Move `.item()`, `.cpu()`, `.tolist()` and printing a tensor out of the loop (keep running values on the GPU, "
    "read them once after it), and the host can enqueue ahead of the GPU again.",
    " Read values back once per iteration, after the forward pass (or keep them on the GPU), and the host can "
    "enqueue ahead of the GPU again."};

// What lets the input overlap the previous iteration.
constexpr Remedy kInputRemedy{
    " laptime's inputs stay on the GPU unless `--pitfall pageable` asks otherwise: run without it.",
    " Load batches into pinned memory (`DataLoader(..., pin_memory=True)`, enough `num_workers`) and copy them with "
    "`.to(device, non_blocking=True)`, so the copy overlaps the previous step.",
    " Copy from pinned host memory (cudaHostAlloc or cudaHostRegister) with cudaMemcpyAsync, so the copy overlaps "
    "the previous iteration."};

// The verdict's numbers (analysis.h): busy over the lap, the idle time by what the GPU waited
// for, the synchronizations' cost.
VerdictFigures verdict_figures(const Analysis& a) {
  VerdictFigures f;
  Ns span_total = 0, busy_total = 0;
  for (const Iteration& it : a.iterations) {
    if (!it.steady() || !it.has_gpu) continue;
    span_total += it.gpu_span();
    busy_total += it.busy;
    f.measured = true;
  }
  const double shrink = a.lap_ms - a.lap_without_syncs_ms;
  if (shrink > 0.0005 * a.lap_ms) {  // what the verdict calls a saving
    f.saving_ms = shrink;
    f.saving_pct = a.lap_ms > 0 ? 100.0 * shrink / a.lap_ms : 0.0;
  }
  const Ns period_total = span_total + a.between_iterations;
  if (!f.measured || period_total <= 0) return f;
  const Ns idle = period_total - busy_total;
  f.lap_ns = period_total;
  f.idle_ns = idle;
  f.busy_pct = 100.0 * double(busy_total) / double(period_total);
  f.idle_pct = 100.0 - f.busy_pct;
  // Overlapping host-to-device copies can add up to more than the lap: a share, at most all of it.
  f.input_pct = 100.0 * std::min(1.0, double(a.input_wait + a.htod_time) / double(period_total));
  if (idle > 0) {
    const Ns host_wait = a.host_wait_idle + (a.between_iterations - a.input_wait);
    const double share = 100.0 / double(idle);
    f.idle_sync_pct = share * double(a.sync_idle);
    f.idle_launch_pct = share * double(host_wait - a.sync_idle);
    f.idle_input_pct = share * double(a.input_wait);
    f.idle_queued_pct = std::max(0.0, 100.0 - f.idle_sync_pct - f.idle_launch_pct - f.idle_input_pct);
  }
  return f;
}

void write_verdict(Analysis& a) {
  a.figures = verdict_figures(a);
  const VerdictFigures& f = a.figures;
  std::string v;
  if (!f.measured) {
    a.bound = Bound::NoGpuWork;
    v = "No GPU work was launched inside the steady `" + a.range_name +
        "` ranges, so the GPU questions have no answer: capture with `nsys profile --trace=cuda,nvtx` (the CUDA "
        "API trace ties GPU work to the ranges).";
  } else {
    const double host_pct = f.idle_launch_pct + f.idle_sync_pct;  // of the idle time, waiting for the host
    const std::string busy_words = format("the GPU is busy %.1f%% of the lap over the steady iterations", f.busy_pct);
    if (f.busy_pct >= 90) {
      a.bound = Bound::GpuBound;
      const CategoryRow& top = a.categories.front();
      v = "GPU-bound: " + busy_words + " (" + a.range_name + " takes " + format("%.3f", a.gpu_ms.median) +
          " ms on the GPU, median); ";
      if (a.graphs.replay_time > top.time)  // replays traced whole: their kernels are not in the trace
        v += format(
            "time goes to CUDA Graph replays, %.0f%% of GPU time (which kernels run inside them needs "
            "`nsys profile --cuda-graph-trace=node`).",
            a.gpu_time ? 100.0 * a.graphs.replay_time / a.gpu_time : 0.0);
      else
        v += std::string("time goes to the kernels themselves, ") + category_name(top.category) +
             format(" first with %.0f%% of GPU time.", a.gpu_time ? 100.0 * top.time / a.gpu_time : 0.0);
    } else if (f.input_pct >= 0.5 * f.idle_pct) {
      a.bound = Bound::InputBound;
      v = "Input-bound: " + busy_words + format("; %.0f%% of the lap", f.input_pct) +
          " the GPU waits for input (host busy outside the iteration ranges, or host-to-device copies)." +
          kInputRemedy.for_program(a.program);
    } else if (f.idle_pct > 0 && host_pct >= 50 && f.idle_sync_pct > f.idle_launch_pct) {
      a.bound = Bound::SyncBound;
      v = "Sync-bound: " + busy_words +
          format(
              "; %.0f%% of the idle time follows a synchronization that stalled it (the host waited in the "
              "call until the GPU had run everything queued, and the GPU stayed idle until the host launched "
              "again)",
              f.idle_sync_pct) +
          (f.idle_launch_pct >= 0.5 ? format(", and %.0f%% waits for launches alone.", f.idle_launch_pct) : ".") +
          kSyncRemedy.for_program(a.program);
    } else if (f.idle_pct > 0 && host_pct >= 50) {
      a.bound = Bound::LaunchBound;
      v = "Launch-bound: " + busy_words +
          format("; %.0f%% of the idle time the GPU waits for the CPU", f.idle_launch_pct) +
          " to launch the next kernel (host " + format("%.3f", a.host_ms.median) +
          " ms to enqueue an iteration the GPU runs in " + format("%.3f", a.gpu_ms.median) + " ms, medians)" +
          (a.sync_idle ? format(", and %.0f%% after a synchronization that stalled it", f.idle_sync_pct) : "") + ".";
      // Where the longest waits sit, by layer kind, and whether the host was in CUDA calls.
      std::map<std::string, std::pair<Ns, Ns>> by_layer;  // folded range -> (host-wait gap time, in CUDA calls)
      for (const Gap& g : a.gaps)
        if (g.cause == GapCause::HostWait) {
          auto& [time, in_cuda] = by_layer[detail::fold_indices(g.cpu_range.str())];
          time += g.duration();
          in_cuda += g.cpu_in_cuda;
        }
      const auto worst = std::max_element(by_layer.begin(), by_layer.end(),
                                          [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
      if (worst != by_layer.end())
        v += format(" The largest waits sit in %s (%.0f%% of the idle time", worst->first.c_str(),
                    f.idle_ns ? 100.0 * double(worst->second.first) / double(f.idle_ns) : 0.0) +
             (worst->second.second * 2 < worst->second.first ? "; the host was in its own code, not CUDA calls)."
                                                             : "; the host was inside CUDA calls).");
      if (a.sync_stall < 0.05 * a.lap_ms * 1e6 * std::max<size_t>(a.steady_count, 1))
        v += kLaunchRemedy.for_program(a.program);
      else
        v += " Here the synchronizations below empty the queue, so every launch after one is on the critical path.";
    } else {
      a.bound = Bound::Mixed;
      v = "Partly idle, not mainly for the host: " + busy_words +
          format(", and only %.0f%% of the idle time waits for the host to launch; the rest had work queued ",
                 host_pct) +
          "(dependencies, synchronizations, kernel-boundary latency)" +
          (a.gaps.empty() ? format(", spread thin: no idle stretch is longer than %g us.", a.gap_threshold_us)
                          : ": the gap table shows the largest stretches.");
    }
  }
  a.verdict = v + sync_verdict(a);
}

}  // namespace

Analysis analyze(const TraceJoin& j, const ReportOptions& o) {
  const ProcessChoice c = choose_processes(j, o.range, o.pid);
  if (c.reported.size() > 1)
    throw TraceError("the trace holds " + std::to_string(c.reported.size()) + " processes with iterations, " +
                     process_list(j.trace(), c.reported) + ": each is a loop of its own; name one with --pid N.");
  Analysis a = analyze(j, o, c.reported.empty() ? find_iterations(j, o.range) : c.reported.front().set);
  a.notes.insert(a.notes.end(), c.notes.begin(), c.notes.end());
  return a;
}

Analysis analyze(const TraceJoin& j, const ReportOptions& o, const IterationSet& iterations) {
  const Trace& t = j.trace();
  Analysis a;
  a.names = t.names;
  a.source = t.source;
  for (const Gpu& g : t.gpus)
    a.gpu += (a.gpu.empty() ? "" : "; ") + g.name + (g.sm_count ? ", " + std::to_string(g.sm_count) + " SMs" : "");
  a.notes = t.notes;
  a.dropped = t.dropped;
  a.program = identify_program(t, iterations.pid);
  a.gap_threshold_us = o.gap_us;
  a.top = o.top;
  if (t.api_calls.empty())
    a.notes.push_back(
        "The capture has no CUDA API calls (was it taken without --trace=cuda?): GPU work cannot be "
        "tied to NVTX ranges.");

  // 1. The iterations, warm-up, and which are steady (needs the GPU spans of 2.).
  mark_warmup(t, iterations, o.skip_warmup, a, a.notes);
  if (std::string note = interleaved_threads_note(t, iterations); !note.empty()) a.notes.push_back(std::move(note));
  if (std::string note = unexpanded_graph_note(j, a.iterations); !note.empty()) a.notes.push_back(std::move(note));
  const std::vector<std::vector<int>> ops_of = ops_by_iteration(j, iterations);
  std::vector<std::pair<int, Gap>> gaps = gpu_spans_and_gaps(j, ops_of, o.gap_us, a.iterations);
  settle_warmup(a);
  mark_host_ahead(a, a.notes);
  graph_launch_ranges(j, ops_of, a, a.notes);
  iteration_statistics(a);
  if (o.scope == AnalysisScope::Iterations) {  // the graph notes, as below; nothing else adds one
    summarize_graphs(j, ops_of, a.iterations, a.graphs, a.notes);
    return a;
  }
  // 2. Utilization: the gaps and idle time of the steady iterations.
  steady_idle(std::move(gaps), a.iterations, a);
  if (iterations.pid)  // a GPU shared with other processes: their kernels in this one's idle time
    if (std::string note = shared_gpu_note(j, ops_of, a.iterations, *iterations.pid, a.idle_in_iterations);
        !note.empty())
      a.notes.push_back(std::move(note));
  // 3. The kernel mix.
  kernel_mix(j, ops_of, a.iterations, a);
  summarize_graphs(j, ops_of, a.iterations, a.graphs, a.notes);
  // 4. Synchronizations and what they cost.
  synchronizations(j, iterations, ops_of, a, a, a);  // reads a's answers to 1 and 2, fills 4

  write_verdict(a);
  a.timeline = timeline_of(j, a, ops_of, a, a);
  return a;
}

}  // namespace laptime::trace
