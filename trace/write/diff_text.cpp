#include "trace/write/diff_text.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/analyses/roofline.h"
#include "trace/model/format.h"
#include "trace/analyses/top.h"

namespace laptime::trace {

using detail::format;
using detail::print_wrapped;

namespace {

std::string us(double ns) { return format("%.1f", ns / 1e3); }

std::string side_line(const DiffSide& r) {
  const stats::Settling& s = r.settling;
  std::string settled = s.settles ? format("initial transient: the first %zu (then %.3f ms ± %.3f ms)", s.start,
                                           s.level / 1e6, s.band / 1e6)
                                  : std::string("no initial transient found");
  for (const stats::LevelShift& shift : s.shifts)
    settled += format("; level shift at iteration %llu, %.3f -> %.3f ms",
                      static_cast<unsigned long long>(r.number_of(shift.at)), shift.before / 1e6, shift.after / 1e6);
  return r.file + " (" + r.kind + ": " + r.source + ")\n              " +
         format("%zu steady iterations, warm-up %s; %s", r.iteration_ns.size(), r.warmup_rule.c_str(), settled.c_str());
}

std::string counts_str(double b, double a, Label l) {
  if (l == Label::OnlyBefore) return calls_str(b) + " -> -";
  if (l == Label::OnlyAfter) return "- -> " + calls_str(a);
  return b == a ? calls_str(b) : calls_str(b) + " -> " + calls_str(a);
}

// The kernels cell: a side whose graph replays were traced whole has no kernel count (trace/analyses/graph.h).
std::string kernel_counts(const Diff& d, const DiffRow& r) {
  if (!r.whole || (!d.before.graph_replays && !d.after.graph_replays))
    return counts_str(r.kernels_before, r.kernels_after, r.label);
  return (d.before.graph_replays ? "?" : calls_str(r.kernels_before)) + " -> " +
         (d.after.graph_replays ? "?" : calls_str(r.kernels_after));
}

}  // namespace

void print_diff(const Diff& d, std::FILE* out) {
  const DiffOptions& o = d.options;
  std::fprintf(out, "  before      %s\n", side_line(d.before).c_str());
  std::fprintf(out, "  after       %s\n", side_line(d.after).c_str());
  std::fprintf(out,
               "  method      medians of the steady iterations; 95%% interval of the change by bootstrap (%d "
               "resamples per row, seed %llu)\n",
               o.resamples, static_cast<unsigned long long>(o.seed));
  std::fprintf(out,
               "  labels      SLOWER/FASTER: interval clear of zero and change beyond ±%g%% and ±%g us; SAME: "
               "interval within ±%g%% (or ±%g us)\n"
               "              (SAME within ...: clear of zero too, a real change that small); else UNCLEAR\n",
               o.threshold_pct, o.min_change_us, o.threshold_pct, o.min_change_us);
  std::fprintf(out,
               "  layers      %s; a layer's time is the GPU time of the work launched inside its range%s, "
               "nested ranges included\n",
               o.by == LayerKey::Folded ? "NVTX names with block indices folded (h.*.attn)" : "NVTX names per block",
               d.before.graph_work || d.after.graph_work ? " (a CUDA Graph's: captured inside it)" : "");
  for (const std::string& n : d.notes) {
    std::fprintf(out, "  note\n");
    print_wrapped(out, n, 4);
  }
  std::fprintf(out, "\n");
  bool roof = false;
  for (const DiffRow& r : d.rows) roof = roof || r.roof_before || r.roof_after;
  auto roof_side = [](const std::optional<RooflinePoint>& p) -> std::string {
    if (!p) return "-";
    return p->has_bound ? format("%.0f%%", p->pct_of_bound) : format("%.0f TF/s", p->tflops);
  };
  auto roof_cell = [&](const DiffRow& r) -> std::string {
    const std::optional<RooflinePoint>& b = r.roof_after ? r.roof_after : r.roof_before;
    return roof_side(r.roof_before) + " -> " + roof_side(r.roof_after) +
           (b && b->has_bound ? std::string(" ") + roof_bound_name(b->bound) : "");
  };
  std::vector<std::vector<std::string>> rows{
      {"layer", "before (us)", "after (us)", "change (us)", "change", "95% interval", "label", "kernels", "launches"}};
  if (roof) rows[0].push_back(d.ceilings ? "% of bound" : "TFLOP/s");
  // The whole iteration (always the first row) and the first --top layers.
  const size_t shown = 1 + text_rows(o.top, d.rows.size() - 1);
  for (size_t i = 0; i < shown; ++i) {
    const DiffRow& r = d.rows[i];
    const bool both = r.label != Label::OnlyBefore && r.label != Label::OnlyAfter;
    const bool no_counts = r.whole && (d.before.steady_ops.empty() || d.after.steady_ops.empty());
    rows.push_back({r.name, r.label == Label::OnlyAfter ? "-" : us(r.before_ns),
                    r.label == Label::OnlyBefore ? "-" : us(r.after_ns), format("%+.1f", r.change_ns / 1e3),
                    both ? format("%+.1f%%", r.change_pct) : "",
                    both && r.before_ns > 0
                        ? format("%+.1f%% .. %+.1f%%", 100 * r.ci.lo / r.before_ns, 100 * r.ci.hi / r.before_ns)
                        : "",
                    r.same_within ? std::string(label_name(r.label)) + " " + within_words(r) : label_name(r.label),
                    no_counts ? "" : kernel_counts(d, r),
                    no_counts ? "" : counts_str(r.launches_before, r.launches_after, r.label)});
    if (roof) rows.back().push_back(roof_cell(r));
  }
  detail::print_table(out, rows, roof ? "lrrrrrllll" : "lrrrrrlll", 2);
  detail::print_more_rows(out, d.rows.size() - shown, 2);
  std::fprintf(out, "  (kernels, launches: per iteration, medians; a block-folded layer counts every block)\n");
  if (roof)
    std::fprintf(out, "  (%s: each side's median time against the FLOPs and bytes of its bench sidecar%s)\n",
                 d.ceilings ? "% of bound: achieved over the ceiling of the layer's bound (compute or memory)"
                            : "TFLOP/s: achieved",
                 d.ceilings ? (", ceilings " + d.ceilings->source).c_str() : "");
  if (d.energy) {  // beside the lap: NVML's energy counter, from both bench reports' blocks
    const EnergyRow& e = *d.energy;
    std::fprintf(out, "  energy      per forward %.3f -> %.3f J (%+.1f%%, 95%% interval %+.1f%% .. %+.1f%%): %s\n",
                 e.before_j, e.after_j, e.change_pct, e.before_j > 0 ? 100 * e.ci.lo / e.before_j : 0.0,
                 e.before_j > 0 ? 100 * e.ci.hi / e.before_j : 0.0, energy_label_words(e).c_str());
  }

  bool any = false;
  size_t notes_left_out = 0;  // of the rows the table left out
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const DiffRow& r = d.rows[i];
    if (r.kernel_note.empty()) continue;
    if (i >= shown) {
      ++notes_left_out;
      continue;
    }
    if (!any) std::fprintf(out, "\nKernels that appeared or disappeared\n");
    any = true;
    std::fprintf(out, "  %s\n", r.name.c_str());
    print_wrapped(out, r.kernel_note, 4);
  }
  if (notes_left_out && !any) std::fprintf(out, "\nKernels that appeared or disappeared\n");
  detail::print_more_rows(out, notes_left_out, 2, "layers with kernel changes");

  std::map<Label, size_t> count;
  size_t real_same = 0;  // SAME rows whose interval excludes zero
  for (const DiffRow& r : d.rows)
    if (!r.whole) {
      ++count[r.label];
      real_same += r.same_within ? 1 : 0;
    }
  const DiffRow& w = d.rows.front();
  std::string verdict = format("the iteration is %s", label_name(w.label));
  if (w.same_within)
    verdict += format(" %s (%+.1f%%, %.3f -> %.3f ms: a real change, its interval %+.1f%% .. %+.1f%% clear of zero)",
                      within_words(w).c_str(), w.change_pct, w.before_ns / 1e6, w.after_ns / 1e6,
                      100 * w.ci.lo / w.before_ns, 100 * w.ci.hi / w.before_ns);
  else
    verdict += format(" (%+.1f%%, %.3f -> %.3f ms)", w.change_pct, w.before_ns / 1e6, w.after_ns / 1e6);
  if (!count.empty()) {
    std::string list;
    for (const auto& [l, n] : count) {
      list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + label_name(l);
      if (l == Label::Same && real_same) list += format(" (%zu of them a real change within the line)", real_same);
    }
    verdict += "; layers: " + list;
  }
  std::fprintf(out, "\nVerdict: %s.\n", verdict.c_str());
  if (o.fail_if_slower_pct) {
    if (d.gate_failed) {
      std::fprintf(out, "Gate --fail-if-slower %g: FAILED (exit 3)\n", *o.fail_if_slower_pct);
      for (const std::string& s : d.gate_reasons) std::fprintf(out, "  %s\n", s.c_str());
    } else {
      std::fprintf(out, "Gate --fail-if-slower %g: passed (nothing SLOWER by more than %g%%)\n", *o.fail_if_slower_pct,
                   *o.fail_if_slower_pct);
    }
  }
}

}  // namespace laptime::trace
