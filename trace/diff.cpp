#include "trace/diff.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "trace/kernels.h"
#include "trace/text_util.h"

namespace laptime::trace {

using detail::format;

const char* label_name(Label l) {
  switch (l) {
    case Label::Faster: return "FASTER";
    case Label::Slower: return "SLOWER";
    case Label::Same: return "SAME";
    case Label::Unclear: return "UNCLEAR";
    case Label::OnlyBefore: return "ONLY BEFORE";
    case Label::OnlyAfter: return "ONLY AFTER";
  }
  return "?";
}

Label classify_change(double before_median, double change, const stats::Interval& ci, const DiffOptions& o) {
  if (!(before_median > 0)) return Label::Unclear;
  const double t = o.threshold_pct / 100 * before_median;  // the relative threshold, in ns
  const double a = o.min_change_us * 1000;                 // the absolute one
  if (ci.lo > 0 && change >= t && change >= a) return Label::Slower;
  if (ci.hi < 0 && change <= -t && change <= -a) return Label::Faster;
  if ((ci.lo >= -t && ci.hi <= t) || (ci.lo >= -a && ci.hi <= a)) return Label::Same;
  return Label::Unclear;
}

std::string calls_str(double c) { return std::fabs(c - std::round(c)) < 1e-9 ? format("%.0f", c) : format("%.2f", c); }

namespace {

DiffRow compare(const std::string& name, const std::vector<double>& before, const std::vector<double>& after,
                const DiffOptions& o, uint64_t seed) {
  DiffRow row;
  row.name = name;
  row.before_ns = stats::median(before);
  row.after_ns = stats::median(after);
  row.change_ns = row.after_ns - row.before_ns;
  row.change_pct = row.before_ns > 0 ? 100 * row.change_ns / row.before_ns : 0;
  row.ci = stats::bootstrap_median_change(before, after, o.resamples, seed);
  row.label = classify_change(row.before_ns, row.change_ns, row.ci, o);
  return row;
}

// A stable per-row seed, so a row's interval does not depend on which other rows exist.
uint64_t row_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return seed ^ h;
}

void describe_kernels(DiffRow& row, const LayerRun* b, const LayerRun* a) {
  static const std::map<std::string, double> kNone;
  const auto& kb = b ? b->kernel_calls : kNone;
  const auto& ka = a ? a->kernel_calls : kNone;
  for (const auto& [k, c] : kb)
    if (!ka.count(k)) row.gone.emplace_back(k, c);
  for (const auto& [k, c] : ka)
    if (!kb.count(k)) row.added.emplace_back(k, c);
}

}  // namespace

namespace {

// The roofline of `row` on one side: the FLOPs and bytes of the sidecar entries the row stands
// for (its name, or every block's range when folded; the whole iteration: the top level), over
// the row's median time on that side.
std::optional<RooflinePoint> row_roofline(const DiffRow& row, double time_ns, const LayerCosts& costs,
                                          const std::optional<Ceilings>& ceilings, const DiffOptions& o) {
  if (time_ns <= 0) return std::nullopt;
  double flops = 0, bytes = 0;
  bool found = false;
  // A layer that computes in another precision than the run's (an fp8 run's bf16 convolutions)
  // is held to that precision's ceiling, as the roofline does; rows whose entries disagree (or
  // name none) keep the run's.
  std::optional<std::string> own;
  bool agree = true;
  for (const LayerCostEntry& e : costs.layers) {
    const bool match = row.whole ? e.parent.empty()
                                 : (o.by == LayerKey::Folded ? fold_block_indices(e.name) : e.name) == row.name;
    if (!match) continue;
    flops += e.flops;
    bytes += e.bytes();
    found = true;
    const std::string p = e.precision.empty() ? costs.precision : e.precision;
    if (own && *own != p) agree = false;
    own = p;
  }
  if (!found || bytes <= 0) return std::nullopt;
  const std::string precision = agree && own ? *own : costs.precision;
  return roofline_point(flops, bytes, time_ns / 1e9, ceilings ? &*ceilings : nullptr, precision);
}

void add_roofline(Diff& d, const DiffSide& before, const DiffSide& after, const DiffOptions& o) {
  if (!before.costs && !after.costs) return;
  const std::string& gpu = after.gpu.empty() ? before.gpu : after.gpu;
  if (!o.peak.empty()) {
    d.ceilings = read_ceilings(o.peak);  // named: a bad file is an error
  } else if (!gpu.empty() && std::ifstream(default_peak_path(gpu))) {
    try {
      d.ceilings = read_ceilings(default_peak_path(gpu));
    } catch (const TraceError& e) {
      d.notes.push_back(std::string("roofline without ceilings: ") + e.what());
    }
  }
  if (!d.ceilings)
    d.notes.push_back("The roofline columns show achieved TFLOP/s only: no ceilings (run `laptime peak` on this GPU, "
                      "or pass --peak FILE).");
  for (DiffRow& r : d.rows) {
    if (before.costs && r.label != Label::OnlyAfter) r.roof_before = row_roofline(r, r.before_ns, *before.costs, d.ceilings, o);
    if (after.costs && r.label != Label::OnlyBefore) r.roof_after = row_roofline(r, r.after_ns, *after.costs, d.ceilings, o);
  }
}

}  // namespace

namespace {

// The whole iteration: its time, and where both sides are traces its kernels and launches.
DiffRow whole_iteration(const DiffSide& before, const DiffSide& after, const DiffOptions& o) {
  DiffRow whole = compare("(iteration)", before.iteration_ns, after.iteration_ns, o, row_seed(o.seed, "(iteration)"));
  whole.whole = true;
  auto per_iteration = [](const DiffSide& r, bool launches) {
    std::vector<double> v;
    for (const auto& ops : r.steady_ops) {
      std::set<int> calls;
      double kernels = 0;
      for (const OpRecord& op : ops) {
        kernels += op.kernel ? 1 : 0;
        if (op.api >= 0) calls.insert(op.api);
      }
      v.push_back(launches ? double(calls.size()) : kernels);
    }
    return stats::median(v);
  };
  if (!before.steady_ops.empty() && !after.steady_ops.empty()) {
    whole.kernels_before = per_iteration(before, false);
    whole.kernels_after = per_iteration(after, false);
    whole.launches_before = per_iteration(before, true);
    whole.launches_after = per_iteration(after, true);
  }
  return whole;
}

// Medians over a side's steady iterations: the GPU's work (the union of its operations' intervals)
// and the idle time between it, inside the iteration's span.
std::pair<double, double> work_and_idle(const DiffSide& r) {
  std::vector<double> work, idle;
  for (size_t s = 0; s < r.steady_ops.size() && s < r.iteration_ns.size(); ++s) {
    Ns busy = 0, cur_start = 0, cur_end = -1;
    for (const OpRecord& op : r.steady_ops[s]) {  // by start
      if (op.start > cur_end) {
        busy += cur_end > cur_start ? cur_end - cur_start : 0;
        cur_start = op.start;
        cur_end = op.end;
      } else {
        cur_end = std::max(cur_end, op.end);
      }
    }
    busy += cur_end > cur_start ? cur_end - cur_start : 0;
    work.push_back(double(busy));
    idle.push_back(r.iteration_ns[s] - double(busy));
  }
  return {stats::median(work), stats::median(idle)};
}

// A CUDA Graph on one side or both: where the iteration's change went, work or idle time.
std::string where_time_went(const DiffSide& before, const DiffSide& after, const DiffRow& whole) {
  const auto [work_b, idle_b] = work_and_idle(before);
  const auto [work_a, idle_a] = work_and_idle(after);
  return format("Where the time went (per iteration, medians): the GPU's own work %.1f -> %.1f us, its idle time "
                "between work %.1f -> %.1f us, launch calls %s -> %s%s.",
                work_b / 1e3, work_a / 1e3, idle_b / 1e3, idle_a / 1e3, calls_str(whole.launches_before).c_str(),
                calls_str(whole.launches_after).c_str(),
                before.graph_replays || after.graph_replays
                    ? " (a graph replay traced whole counts as work from its first kernel to its last)"
                    : "");
}

// A trace side without layer ranges takes the other trace side's where its kernels match
// (borrow_layers), with a note either way; returns whether a side needed it.
bool borrow_missing_layers(DiffSide& before, DiffSide& after, const DiffOptions& o, std::vector<std::string>& notes) {
  bool told = false;
  for (auto [target, from, what] : {std::tuple<DiffSide*, const DiffSide*, const char*>{&before, &after, "before"},
                                     {&after, &before, "after"}}) {
    if (target->kind != "trace" || from->kind != "trace" || target->has_layers || !from->has_layers) continue;
    told = true;
    if (target->graph_replays) continue;  // its own note says why: nothing to match kernels with
    if (borrow_layers(*target, *from, o))
      notes.push_back(std::string("The ") + what + " side has no layer ranges (a CUDA Graph replay carries none): its "
                      "kernels run in the same order as the other side's, so each takes the layer of its "
                      "counterpart (" + std::to_string(target->steady_ops.front().size()) + " GPU operations per iteration).");
    else
      notes.push_back(std::string("The ") + what + " side has no layer ranges and its kernels do not run in the "
                      "other side's order: only the whole iteration is compared.");
  }
  return told;
}

// One row per layer name on either side, by name: compared where both have it, ONLY BEFORE
// or ONLY AFTER otherwise, with its kernel and launch counts and the kernels only one side has.
std::vector<DiffRow> layer_rows(const DiffSide& before, const DiffSide& after, const DiffOptions& o) {
  std::map<std::string, std::pair<const LayerRun*, const LayerRun*>> names;
  for (const LayerRun& l : before.layers) names[l.name].first = &l;
  for (const LayerRun& l : after.layers) names[l.name].second = &l;
  std::vector<DiffRow> rows;
  for (const auto& [name, pair] : names) {
    const auto [b, a] = pair;
    DiffRow row;
    if (b && a) {
      row = compare(name, b->time_ns, a->time_ns, o, row_seed(o.seed, name));
    } else {
      row.name = name;
      row.before_ns = b ? stats::median(b->time_ns) : 0;
      row.after_ns = a ? stats::median(a->time_ns) : 0;
      row.change_ns = row.after_ns - row.before_ns;
      row.change_pct = b ? -100 : 0;
      row.label = b ? Label::OnlyBefore : Label::OnlyAfter;
    }
    row.depth = (b ? b : a)->depth;
    if (b) {
      row.kernels_before = stats::median(b->kernels);
      row.launches_before = stats::median(b->launches);
    }
    if (a) {
      row.kernels_after = stats::median(a->kernels);
      row.launches_after = stats::median(a->launches);
    }
    describe_kernels(row, b, a);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Words for the kernels of each row (DiffRow::kernel_note): where a gone kernel now lives, or
// that its layer lost a kernel (fused into a neighbour, as a GELU moved into the GEMM's
// epilogue).
void narrate_kernels(std::vector<DiffRow>& rows) {
  std::map<std::string, std::vector<std::string>> new_home;  // kernel -> layers that gained it
  for (const DiffRow& r : rows)
    for (const auto& [k, c] : r.added) new_home[k].push_back(r.name);
  // A kernel change is told on the innermost row that has it, not again on every parent.
  auto told_deeper = [&](const DiffRow& r, const std::string& k, bool gone) {
    for (const DiffRow& c : rows) {
      if (c.depth <= r.depth || c.name.compare(0, r.name.size() + 1, r.name + ".") != 0) continue;
      for (const auto& [name, calls] : gone ? c.gone : c.added)
        if (name == k) return true;
    }
    return false;
  };
  for (DiffRow& r : rows) {
    std::vector<std::pair<std::string, double>> gone, added;
    for (const auto& g : r.gone)
      if (!told_deeper(r, g.first, true)) gone.push_back(g);
    for (const auto& a : r.added)
      if (!told_deeper(r, a.first, false)) added.push_back(a);
    std::string note;
    for (const auto& [k, c] : gone) {
      note += (note.empty() ? "" : "; ") + k + " gone (" + calls_str(c) + "/iter before)";
      std::string moved;  // the innermost layers that gained it (not their parents too)
      const std::vector<std::string>& homes = new_home[k];
      for (const std::string& l : homes) {
        const bool parent = std::any_of(homes.begin(), homes.end(), [&](const std::string& other) {
          return other.compare(0, l.size() + 1, l + ".") == 0;
        });
        if (l != r.name && !parent) moved += (moved.empty() ? "" : ", ") + l;
      }
      if (!moved.empty()) note += ", now in " + moved;
    }
    for (const auto& [k, c] : added)
      note += (note.empty() ? "" : "; ") + k + " new (" + calls_str(c) + "/iter)";
    if (!gone.empty() && r.label != Label::OnlyBefore && r.kernels_after < r.kernels_before)
      note += format("; %s kernels per iteration %s -> %s: work fused into fewer kernels", r.name.c_str(),
                     calls_str(r.kernels_before).c_str(), calls_str(r.kernels_after).c_str());
    // A layer gone with its kernels (laptime's h.*.mlp.gelu once the GELU runs in the c_fc
    // GEMM's epilogue): when the enclosing layer now runs fewer kernels, say it was fused.
    if (r.label == Label::OnlyBefore && r.name.find('.') != std::string::npos) {
      const std::string parent = r.name.substr(0, r.name.rfind('.'));
      for (const DiffRow& p : rows)
        if (p.name == parent && p.label != Label::OnlyBefore && p.kernels_after < p.kernels_before) {
          bool anywhere = false;
          for (const auto& [k, c] : gone) anywhere = anywhere || !new_home[k].empty();
          if (!anywhere)
            note += format("; the layer is gone and %s runs %s -> %s kernels per iteration: its work was fused "
                           "into another kernel there",
                           parent.c_str(), calls_str(p.kernels_before).c_str(), calls_str(p.kernels_after).c_str());
        }
    }
    r.kernel_note = note;
  }
}

// The gate: every row SLOWER by more than --fail-if-slower, in words.
void apply_gate(Diff& d, const DiffOptions& o) {
  if (!o.fail_if_slower_pct) return;
  for (const DiffRow& r : d.rows)
    if (r.label == Label::Slower && r.change_pct > *o.fail_if_slower_pct) {
      d.gate_failed = true;
      d.gate_reasons.push_back(format("%s is %.1f%% slower (95%% CI %+.1f%% .. %+.1f%%), more than %g%%",
                                      r.name.c_str(), r.change_pct, 100 * r.ci.lo / r.before_ns,
                                      100 * r.ci.hi / r.before_ns, *o.fail_if_slower_pct));
    }
}

// "The two runs differ in model (gpt2 -> resnet50), GPU (...) and software (torch 2.5 -> 2.6): ...".
std::string differences_note(const std::vector<RunDifference>& diffs) {
  std::vector<std::string> parts, software;
  for (const RunDifference& x : diffs) {
    const bool soft = x.what != "model" && x.what != "precision" && x.what != "shape" && x.what != "mode" &&
                      x.what != "GPU";
    (soft ? software : parts).push_back(x.what + (soft ? " " : " (") + x.before + " -> " + x.after + (soft ? "" : ")"));
  }
  if (!software.empty()) {
    std::string s = "software (";
    for (size_t i = 0; i < software.size(); ++i) s += (i ? ", " : "") + software[i];
    parts.push_back(s + ")");
  }
  std::string list;
  for (size_t i = 0; i < parts.size(); ++i)
    list += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return "The two runs differ in " + list + ": the change below is all of these at once, not the effect of one "
         "change; compare runs that differ in one thing only to attribute it.";
}

}  // namespace

std::vector<RunDifference> run_differences(const DiffSide& before, const DiffSide& after) {
  std::vector<RunDifference> out;
  const RunIdentity &b = before.identity, &a = after.identity;
  auto compare = [&](const char* what, const std::string& x, const std::string& y) {
    if (!x.empty() && !y.empty() && x != y) out.push_back({what, x, y});
  };
  compare("model", b.model, a.model);
  compare("precision", b.precision, a.precision);
  compare("shape", b.shape, a.shape);
  compare("mode", b.mode, a.mode);
  compare("GPU", before.gpu, after.gpu);
  for (const auto& [name, version] : b.software) {
    const auto other = a.software.find(name);
    if (other != a.software.end()) compare(name.c_str(), version, other->second);
  }
  return out;
}

Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o) {
  Diff d;
  d.options = o;
  // Before every other note: a diff of two different things (a GPT-2 bf16 run on an H200
  // against a ResNet-50 fp32 run on an A100) printed its verdict without a word about it.
  d.differences = run_differences(before, after);
  if (!d.differences.empty()) d.notes.push_back(differences_note(d.differences));
  const DiffRow whole = whole_iteration(before, after, o);
  if (!before.steady_ops.empty() && !after.steady_ops.empty() && (before.graph_work || after.graph_work))
    d.notes.push_back(where_time_went(before, after, whole));
  if (before.kind != after.kind)
    d.notes.push_back("The two sides measure an iteration differently (" + before.measure + " vs " + after.measure +
                      "): read the iteration row with care; layers need traces on both sides.");
  if (before.iteration_ns.size() < 10 || after.iteration_ns.size() < 10)
    d.notes.push_back(format("Few steady iterations (%zu before, %zu after): the intervals are wide; run more "
                             "iterations (bench --iters) for a sharper answer.",
                             before.iteration_ns.size(), after.iteration_ns.size()));
  const bool told_layers = borrow_missing_layers(before, after, o, d.notes);
  d.rows.push_back(whole);
  if (before.has_layers && after.has_layers) {
    std::vector<DiffRow> rows = layer_rows(before, after, o);
    narrate_kernels(rows);
    std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
      return std::fabs(x.change_ns) > std::fabs(y.change_ns);
    });
    for (DiffRow& r : rows) d.rows.push_back(std::move(r));
  } else if (!told_layers) {
    d.notes.push_back("Layers are compared only when both sides are traces with NVTX layer ranges: this diff has "
                      "the whole iteration only.");
  }
  add_roofline(d, before, after, o);
  for (const DiffSide* r : {&before, &after})
    for (const std::string& n : r->notes) d.notes.push_back((r == &before ? "before: " : "after: ") + n);
  apply_gate(d, o);
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

}  // namespace laptime::trace
