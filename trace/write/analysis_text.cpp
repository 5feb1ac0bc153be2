#include "trace/write/analysis_text.h"

#include <algorithm>
#include <map>

#include "trace/model/format.h"
#include "trace/analyses/top.h"

namespace laptime::trace {

using detail::format;
using detail::ms;
using detail::print_wrapped;
using detail::us;

namespace {

// An aligned text table: 'l' or 'r' per column (detail::print_table).
class Table {
 public:
  Table(std::vector<std::string> headers, std::string align) : align_(std::move(align)) {
    rows_.push_back(std::move(headers));
  }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out, int indent) const { detail::print_table(out, rows_, align_, indent); }

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string pct(double x) { return format("%.1f%%", x); }
std::string share(Ns part, Ns whole) { return whole ? pct(100.0 * part / whole) : "-"; }
std::string per_iter(double x, size_t iters, const char* f = "%.3f") { return format(f, iters ? x / iters : 0.0); }

// What the steady iterations ran through CUDA Graphs, in one or two lines (trace/analyses/graph.h).
void print_graphs(const Analysis& a, std::FILE* out) {
  const GraphSummary& g = a.graphs;
  if (!g.any()) return;
  const size_t iters = std::max<size_t>(a.steady_count, 1);
  std::string graphs;
  for (uint32_t id : g.graphs) graphs += (graphs.empty() ? "" : ", ") + std::to_string(id);
  if (g.replays)
    print_wrapped(out,
                  format("CUDA Graphs: %s replay%s per iteration (graph%s %s), %.3f ms per iteration, %s of GPU time. "
                         "nsys traced each replay whole: the kernels inside them need `nsys profile "
                         "--cuda-graph-trace=node`.",
                         per_iter(double(g.replays), iters, "%.3g").c_str(), g.replays == iters ? "" : "s",
                         g.graphs.size() == 1 ? "" : "s", graphs.c_str(), g.replay_time / 1e6 / iters,
                         share(g.replay_time, a.gpu_time).c_str()),
                  2);
  if (g.node_ops)
    print_wrapped(
        out,
        format("CUDA Graphs: %s operations per iteration run by graph nodes (%s launch%s), %.3f ms per "
               "iteration, %s of GPU time; ",
               per_iter(double(g.node_ops), iters, "%.1f").c_str(), per_iter(double(g.launches), iters, "%.3g").c_str(),
               g.launches == iters ? "" : "es", g.node_time / 1e6 / iters, share(g.node_time, a.gpu_time).c_str()) +
            (g.node_ops_named == g.node_ops
                 ? std::string("each named by the NVTX range its node was made in.")
                 : share(static_cast<Ns>(g.node_ops_named), static_cast<Ns>(g.node_ops)) +
                       " of them named by the NVTX range their node was made in, the rest by their "
                       "launch's."),
        2);
}

// Where the trace came from, which ranges are the iterations and why, what the reader left out.
void print_header(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  std::fprintf(out, "  source      %s\n", a.source.c_str());
  if (!a.gpu.empty()) std::fprintf(out, "  gpu         %s\n", a.gpu.c_str());
  size_t warmups = 0;
  for (const Iteration& it : a.iterations) warmups += it.warmup;
  std::fprintf(out, "  iterations  %zu `%s` ranges: %zu warm-up, %zu steady\n", a.iterations.size(),
               a.range_name.c_str(), warmups, iters);
  print_wrapped(out, "found by: " + a.range_rule, 14);
  print_wrapped(out, "warm-up: " + a.warmup_rule, 14);
  print_wrapped(out, "steady: " + a.steady_rule, 14);
  if (a.dropped.total()) std::fprintf(out, "  invalid     %s\n", a.dropped.summary().c_str());
  for (const std::string& note : a.notes) {
    std::fprintf(out, "  note\n");
    print_wrapped(out, note, 4);
  }
}

// 1: the lap and the host, GPU and period summaries.
void print_lap(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  std::fprintf(out, "\n1. Steady-state time per iteration (ms, %zu iterations)\n", iters);
  std::fprintf(out, "  lap         %.3f ms (%s)\n", a.lap_ms, a.lap_source.c_str());
  if (!a.lap_reason.empty()) print_wrapped(out, "not the host range: " + a.lap_reason + ".", 14);
  Table t1({"", "mean", "median", "min", "max"}, "lrrrr");
  auto srow = [&](const std::string& name, const stats::Summary& s) {
    if (s.n)
      t1.row({name, format("%.3f", s.mean), format("%.3f", s.median), format("%.3f", s.min), format("%.3f", s.max)});
  };
  srow("host: NVTX range", a.host_ms);
  srow("GPU: range projected", a.gpu_ms);
  srow("GPU: start to next start", a.period_ms);
  t1.print(out, 2);
  std::fprintf(out,
               "  (host = the range as the CPU ran it; projected = first start to last end of the GPU work\n"
               "   launched inside it; start to next start = the lap one iteration costs in a loop)\n");
}

// 2: busy and idle time, the gaps.
void print_utilization(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  std::fprintf(out, "\n2. GPU utilization inside steady iterations\n");
  if (a.span_fill_pct.n == 0) {
    std::fprintf(out, "  no GPU work was launched inside the steady iterations\n");
  } else {
    Ns gap_time = 0, gap_host_wait = 0;
    for (const Gap& g : a.gaps) {
      gap_time += g.duration();
      gap_host_wait += g.cause == GapCause::HostWait ? g.duration() : 0;
    }
    const VerdictFigures& f = a.figures;
    std::fprintf(out,
                 "  busy        %.1f%% of the lap (GPU busy time over its start to next start, steady iterations\n"
                 "              together)\n",
                 f.busy_pct);
    std::fprintf(out, "  fill        %.1f%% median (min %.1f%%, max %.1f%%) of each iteration's own GPU span\n",
                 a.span_fill_pct.median, a.span_fill_pct.min, a.span_fill_pct.max);
    std::fprintf(out, "  idle        %s ms per iteration inside its GPU span\n",
                 per_iter(a.idle_in_iterations / 1e6, iters).c_str());
    if (a.period_ms.n)  // one fewer pair of consecutive iterations than iterations
      std::fprintf(out, "              %s ms from one iteration's last GPU work to the next one's first\n",
                   per_iter(a.between_iterations / 1e6, a.period_ms.n).c_str());
    if (f.idle_ns > 0)
      std::fprintf(out,
                   "  waits       of the idle time: %.1f%% for a launch, %.1f%% after a synchronization that stalled\n"
                   "              the host, %.1f%% for input, %.1f%% with work queued\n",
                   f.idle_launch_pct, f.idle_sync_pct, f.idle_input_pct, f.idle_queued_pct);
    if (a.gaps.empty())
      std::fprintf(out, "  gaps        none longer than %g us: the idle time is spread over kernel boundaries\n",
                   a.gap_threshold_us);
    else
      std::fprintf(
          out, "  gaps        %.1f per iteration longer than %g us (%zu in all, %s ms), %s of their time host-wait\n",
          double(a.gaps.size()) / std::max<size_t>(iters, 1), a.gap_threshold_us, a.gaps.size(), ms(gap_time).c_str(),
          share(gap_host_wait, gap_time).c_str());
    if (!a.gaps.empty()) {
      std::fprintf(out, "\n  largest gaps (host-wait: the launch call had not returned when the GPU went idle)\n");
      Table tg({"iter", "at (ms)", "gap (us)", "cause", "launch", "CPU meanwhile", "next GPU work"}, "rrrllll");
      std::map<uint64_t, Ns> gpu_start;
      for (const Iteration& it : a.iterations) gpu_start[it.index] = it.gpu_start;
      const size_t shown = text_rows(a.top, a.gaps.size());
      for (size_t i = 0; i < shown; ++i) {
        const Gap& g = a.gaps[i];
        // A launch of 10 us inside a 200 us gap is not what the host was doing: say so.
        const std::string cpu = g.cpu_in_cuda * 2 >= g.duration()
                                    ? g.cpu_api + " in " + g.cpu_range
                                    : "host code in " + g.cpu_range +
                                          format(" (%.0f%% in CUDA calls)", 100.0 * g.cpu_in_cuda / g.duration());
        tg.row({std::to_string(g.iteration), ms(g.start - gpu_start[g.iteration]), us(g.duration()),
                gap_cause_name(g.cause), g.launch.empty() ? "-" : g.launch.str(), cpu, g.after});
      }
      tg.print(out, 4);
      detail::print_more_rows(out, a.gaps.size() - shown, 4);
    }
  }
}

// 3: by category, by kernel, by layer.
void print_kernel_mix(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  std::fprintf(out, "\n3. Kernel mix (steady iterations: GPU time %s ms, %s ms per iteration)\n",
               ms(a.gpu_time).c_str(), per_iter(a.gpu_time / 1e6, iters).c_str());
  print_graphs(a, out);
  const bool kernels_known = !a.kernels.empty() || a.graphs.replays == 0;
  Table tc({"category", "ms/iter", "share", "ops/iter"}, "lrrr");
  for (const CategoryRow& c : a.categories)
    if (c.count)
      tc.row({category_name(c.category), per_iter(c.time / 1e6, iters), share(c.time, a.gpu_time),
              per_iter(double(c.count), iters, "%.1f")});
  if (kernels_known) tc.print(out, 2);
  if (kernels_known) std::fprintf(out, "\n  top kernels by GPU time\n");
  // The name last and whole: cuDNN's names differ only in the middle (tile sizes).
  Table tk({"share", "ms/iter", "calls/iter", "mean (us)", "category", "kernel"}, "rrrrll");
  const size_t kernels_shown = text_rows(a.top, a.kernels.size());
  for (size_t i = 0; i < kernels_shown; ++i) {
    const KernelRow& k = a.kernels[i];
    tk.row({share(k.time, a.gpu_time), per_iter(k.time / 1e6, iters), per_iter(double(k.count), iters, "%.1f"),
            us(k.time / static_cast<Ns>(k.count)), category_name(k.category), k.name});
  }
  if (kernels_known) {
    tk.print(out, 4);
    detail::print_more_rows(out, a.kernels.size() - kernels_shown, 4);
  }
  std::fprintf(out, "\n  by layer (innermost NVTX range of the launch%s; block indices folded)\n",
               a.graphs.node_ops_named ? ", or where a graph's node was made" : "");
  Table tr({"range", "ops/iter", "ms/iter", "share", "mostly"}, "lrrrl");
  const size_t layers_shown = text_rows(a.top, a.range_patterns.size());
  for (size_t i = 0; i < layers_shown; ++i) {
    const RangeRow& r = a.range_patterns[i];
    int best = 0;
    for (int c = 1; c < kCategoryCount; ++c)
      if (r.time_by_category[c] > r.time_by_category[best]) best = c;
    tr.row({r.range, per_iter(double(r.count), iters, "%.1f"), per_iter(r.time / 1e6, iters), share(r.time, a.gpu_time),
            r.graph_replay_time > r.time_by_category[best] ? "CUDA Graph replays"
                                                           : category_name(static_cast<Category>(best))});
  }
  tr.print(out, 4);
  detail::print_more_rows(out, a.range_patterns.size() - layers_shown, 4);
}

// 4: the blocking calls, what they cost, and the lap without them.
void print_synchronizations(const Analysis& a, std::FILE* out) {
  const size_t iters = a.steady_count;
  std::fprintf(out, "\n4. Synchronization inside steady iterations\n");
  if (!a.has_api_trace) {
    std::fprintf(out, "  unknown: the capture has no CUDA API calls\n");
  } else if (a.syncs.empty()) {
    std::fprintf(out,
                 "  none: no device/stream/event synchronize, blocking copy, pageable async copy, or\n"
                 "  allocation/free inside the loop\n");
  } else {
    Table ts({"kind", "per iter", "host wait (ms/iter)", "stalls/iter", "returned at once/iter", "in"}, "lrrrrl");
    for (const SyncSummary& s : a.sync_summary) {
      std::string in;
      for (size_t i = 0; i < s.places.size() && i < 3; ++i) in += (i ? ", " : "") + s.places[i].name;
      ts.row({sync_kind_name(s.kind), per_iter(double(s.count), iters, "%.2f"), per_iter(s.blocked / 1e6, iters),
              per_iter(double(s.stalls), iters, "%.2f"), per_iter(double(s.returned_at_once), iters, "%.2f"), in});
    }
    ts.print(out, 2);
    std::fprintf(out, "  host wait   %s ms per iteration, %s ms of it for the compute stream's work (stream %lld)\n",
                 per_iter(a.sync_wait / 1e6, iters).c_str(), per_iter(a.sync_stall / 1e6, iters).c_str(),
                 static_cast<long long>(a.compute_stream));
    std::fprintf(out,
                 "  without     a lap of %.3f ms instead of %.3f (the larger of the GPU's own time, %.3f ms, and\n"
                 "              the host's lap less its wait)\n",
                 a.lap_without_syncs_ms, a.lap_ms, a.gpu_floor_ms);
    std::fprintf(out,
                 "\n  calls, longest host wait first (stall: waited for the compute stream's pending work;\n"
                 "  returned at once: did not)\n");
    Table tl({"iter", "api", "range", "host wait (us)", "pending (us)", "effect", "copy"}, "rllrrll");
    const size_t shown = text_rows(a.top, a.syncs.size());
    for (size_t i = 0; i < shown; ++i) {
      const SyncCall& s = a.syncs[i];
      tl.row({std::to_string(s.iteration), s.api, s.range, us(s.duration), us(s.pending), sync_effect_name(s.effect),
              s.detail});
    }
    tl.print(out, 4);
    detail::print_more_rows(out, a.syncs.size() - shown, 4);
  }
  if (!a.syncs_elsewhere.empty()) {
    std::map<std::string, size_t> counts;
    for (const SyncCall& s : a.syncs_elsewhere) ++counts[s.api];
    std::string list;
    for (const auto& [api, count] : counts) list += (list.empty() ? "" : ", ") + std::to_string(count) + "x " + api;
    std::fprintf(out, "  outside steady iterations (warm-up, setup, after the loop; not counted): %s\n", list.c_str());
  }
}

}  // namespace

void print_report(const Analysis& a, std::FILE* out) {
  print_header(a, out);
  print_lap(a, out);
  print_utilization(a, out);
  print_kernel_mix(a, out);
  print_synchronizations(a, out);
  std::fprintf(out, "\nVerdict: %s\n", bound_name(a.bound));
  print_wrapped(out, a.verdict, 2);
}

}  // namespace laptime::trace
