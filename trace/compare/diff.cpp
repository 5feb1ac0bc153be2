#include "trace/compare/diff.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/os.h"
#include "trace/analyses/kernel_mix.h"
#include "trace/analyses/roofline.h"
#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {

using detail::format;

const char* label_name(Label l) {
  switch (l) {
    case Label::Faster:
      return "FASTER";
    case Label::Slower:
      return "SLOWER";
    case Label::Same:
      return "SAME";
    case Label::Unclear:
      return "UNCLEAR";
    case Label::OnlyBefore:
      return "ONLY BEFORE";
    case Label::OnlyAfter:
      return "ONLY AFTER";
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

std::optional<DiffRow::Within> same_within(Label l, double before_median, const stats::Interval& ci,
                                           const DiffOptions& o) {
  if (l != Label::Same || !ci.excludes_zero()) return std::nullopt;
  const double t = o.threshold_pct / 100 * before_median;
  if (ci.lo >= -t && ci.hi <= t) return DiffRow::Within{true, o.threshold_pct};
  return DiffRow::Within{false, o.min_change_us};
}

std::string within_words(const std::optional<DiffRow::Within>& w) {
  if (!w) return "";
  return format(w->relative ? "within ±%g%%" : "within ±%g us", w->bound);
}

const char* energy_label_name(Label l) {
  switch (l) {
    case Label::Faster:
      return "LESS";
    case Label::Slower:
      return "MORE";
    case Label::Same:
      return "SAME";
    default:
      return "UNCLEAR";
  }
}

std::string energy_label_words(const EnergyRow& e) {
  return e.same_within ? std::string(energy_label_name(e.label)) + " " + within_words(e.same_within)
                       : energy_label_name(e.label);
}

std::string calls_str(double c) { return std::fabs(c - std::round(c)) < 1e-9 ? format("%.0f", c) : format("%.2f", c); }

namespace {

// The resampled medians' ranks of each side (stats::draw_resampled_medians), drawn once per
// series length and shared by every row: a row's interval depends on its own series and the
// seed, not on which other rows exist, and the bootstrap costs O(resamples) a row whatever the
// number of iterations (a row that is one value at every drawn rank, O(1)).
class Resamples {
 public:
  explicit Resamples(const DiffOptions& o) : o_(o) {}
  const stats::MedianDraws& before(size_t n) { return get(before_, n, o_.seed); }
  const stats::MedianDraws& after(size_t n) { return get(after_, n, stats::after_seed(o_.seed)); }

 private:
  const stats::MedianDraws& get(std::map<size_t, stats::MedianDraws>& cache, size_t n, uint64_t seed) {
    auto [it, fresh] = cache.try_emplace(n);
    if (fresh) it->second = stats::draw_resampled_medians(n, o_.resamples, seed);
    return it->second;
  }
  const DiffOptions& o_;
  std::map<size_t, stats::MedianDraws> before_, after_;
};

DiffRow compare(const std::string& name, const stats::SortedSample& before, const stats::SortedSample& after,
                const DiffOptions& o, Resamples& resamples) {
  DiffRow row;
  row.name = name;
  row.before_ns = before.median();
  row.after_ns = after.median();
  row.change_ns = row.after_ns - row.before_ns;
  row.change_pct = row.before_ns > 0 ? 100 * row.change_ns / row.before_ns : 0;
  row.ci =
      stats::bootstrap_median_change(before, after, resamples.before(before.size()), resamples.after(after.size()));
  row.label = classify_change(row.before_ns, row.change_ns, row.ci, o);
  row.same_within = same_within(row.label, row.before_ns, row.ci, o);
  return row;
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

// A side's sidecar by row: the FLOPs and bytes of the entries each row stands for (its name, or
// every block's range when folded; the whole iteration: the top level), summed in the file's
// order, each entry's name folded once rather than once per row.
struct RowCosts {
  struct Sum {
    double flops = 0, bytes = 0;
    // A layer that computes in another precision than the run's (an fp8 run's bf16
    // convolutions) is held to that precision's ceiling, as the roofline does; rows whose
    // entries disagree (or name none) keep the run's.
    std::optional<std::string> own;
    bool agree = true;
    void add(const LayerCostEntry& e, const LayerCosts& costs) {
      flops += e.flops;
      bytes += e.bytes();
      const std::string& p = costs.precision_of(e);
      if (own && *own != p) agree = false;
      own = p;
    }
  };
  std::unordered_map<std::string, Sum> by_name;
  std::optional<Sum> top;
  RowCosts(const LayerCosts& costs, const DiffOptions& o) {
    for (const LayerCostEntry& e : costs.layers) {
      by_name[o.by == LayerKey::Folded ? fold_block_indices(e.name) : e.name].add(e, costs);
      if (e.parent.empty()) {
        if (!top) top.emplace();
        top->add(e, costs);
      }
    }
  }
};

// The roofline of `row` on one side: its FLOPs and bytes over its median time on that side.
std::optional<RooflinePoint> row_roofline(const DiffRow& row, double time_ns, const LayerCosts& costs,
                                          const RowCosts& sums, const std::optional<Ceilings>& ceilings) {
  if (time_ns <= 0) return std::nullopt;
  const auto it = sums.by_name.find(row.name);
  const RowCosts::Sum* s = row.whole                  ? (sums.top ? &*sums.top : nullptr)
                           : it != sums.by_name.end() ? &it->second
                                                      : nullptr;
  if (!s || s->bytes <= 0) return std::nullopt;
  const std::string& precision = s->agree && s->own ? *s->own : costs.precision;
  return roofline_point(s->flops, s->bytes, time_ns / 1e9, ceilings ? &*ceilings : nullptr, precision);
}

void add_roofline(Diff& d, const DiffSide& before, const DiffSide& after, const DiffOptions& o) {
  if (!before.costs && !after.costs) return;
  const std::string& gpu = after.gpu.empty() ? before.gpu : after.gpu;
  FoundCeilings found = find_ceilings(o.peak, gpu);
  d.ceilings = std::move(found.ceilings);
  if (!found.note.empty()) d.notes.push_back(found.note);
  if (!d.ceilings)
    d.notes.push_back(
        "The roofline columns show achieved TFLOP/s only: no ceilings (run `laptime peak` on this GPU, "
        "or pass --peak FILE).");
  std::optional<RowCosts> sums_before, sums_after;
  if (before.costs) sums_before.emplace(*before.costs, o);
  if (after.costs) sums_after.emplace(*after.costs, o);
  for (DiffRow& r : d.rows) {
    if (before.costs && r.label != Label::OnlyAfter)
      r.roof_before = row_roofline(r, r.before_ns, *before.costs, *sums_before, d.ceilings);
    if (after.costs && r.label != Label::OnlyBefore)
      r.roof_after = row_roofline(r, r.after_ns, *after.costs, *sums_after, d.ceilings);
  }
}

}  // namespace

namespace {

// The whole iteration: its time, and where both sides are traces its kernels and launches.
DiffRow whole_iteration(const DiffSide& before, const DiffSide& after, const DiffOptions& o, Resamples& resamples) {
  DiffRow whole = compare("(iteration)", stats::SortedSample(before.iteration_ns, 0),
                          stats::SortedSample(after.iteration_ns, 0), o, resamples);
  whole.whole = true;
  // Medians per iteration of the kernels and of the distinct launch calls, in one pass a side.
  auto per_iteration = [](const DiffSide& r, double& kernels_median, double& launches_median) {
    std::vector<double> kernels, launches;
    std::vector<int> calls;
    for (const auto& ops : r.steady_ops) {
      calls.clear();
      double k = 0;
      for (const OpRecord& op : ops) {
        k += op.kernel ? 1 : 0;
        if (op.api >= 0 && (calls.empty() || calls.back() != op.api)) calls.push_back(op.api);  // runs of one call once
      }
      std::sort(calls.begin(), calls.end());
      kernels.push_back(k);
      launches.push_back(double(std::unique(calls.begin(), calls.end()) - calls.begin()));
    }
    kernels_median = stats::median(std::move(kernels));
    launches_median = stats::median(std::move(launches));
  };
  if (!before.steady_ops.empty() && !after.steady_ops.empty()) {
    per_iteration(before, whole.kernels_before, whole.launches_before);
    per_iteration(after, whole.kernels_after, whole.launches_after);
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
  return format(
      "Where the time went (per iteration, medians): the GPU's own work %.1f -> %.1f us, its idle time "
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
  for (auto [target, from, what] :
       {std::tuple<DiffSide*, const DiffSide*, const char*>{&before, &after, "before"}, {&after, &before, "after"}}) {
    if (target->kind != "trace" || from->kind != "trace" || target->has_layers || !from->has_layers) continue;
    told = true;
    if (target->graph_replays) continue;  // its own note says why: nothing to match kernels with
    if (borrow_layers(*target, *from, o))
      notes.push_back(std::string("The ") + what +
                      " side has no layer ranges (a CUDA Graph replay carries none): its "
                      "kernels run in the same order as the other side's, so each takes the layer of its "
                      "counterpart (" +
                      std::to_string(target->steady_ops.front().size()) + " GPU operations per iteration).");
    else
      notes.push_back(std::string("The ") + what +
                      " side has no layer ranges and its kernels do not run in the "
                      "other side's order: only the whole iteration is compared.");
  }
  return told;
}

// One row per layer name on either side, by name: compared where both have it, ONLY BEFORE
// or ONLY AFTER otherwise, with its kernel and launch counts and the kernels only one side has.
std::vector<DiffRow> layer_rows(const DiffSide& before, const DiffSide& after, const DiffOptions& o,
                                Resamples& resamples) {
  std::map<std::string, std::pair<const LayerRun*, const LayerRun*>> names;
  for (const LayerRun& l : before.layers) names[l.name].first = &l;
  for (const LayerRun& l : after.layers) names[l.name].second = &l;
  std::vector<DiffRow> rows;
  for (const auto& [name, pair] : names) {
    const auto [b, a] = pair;
    DiffRow row;
    if (b && a) {
      row = compare(name, b->sample(&LayerRun::Ran::time_ns), a->sample(&LayerRun::Ran::time_ns), o, resamples);
    } else {
      row.name = name;
      row.before_ns = b ? b->sample(&LayerRun::Ran::time_ns).median() : 0;
      row.after_ns = a ? a->sample(&LayerRun::Ran::time_ns).median() : 0;
      row.change_ns = row.after_ns - row.before_ns;
      row.change_pct = b ? -100 : 0;
      row.label = b ? Label::OnlyBefore : Label::OnlyAfter;
    }
    row.depth = (b ? b : a)->depth;
    if (b) {
      row.kernels_before = b->sample(&LayerRun::Ran::kernels).median();
      row.launches_before = b->sample(&LayerRun::Ran::launches).median();
    }
    if (a) {
      row.kernels_after = a->sample(&LayerRun::Ran::kernels).median();
      row.launches_after = a->sample(&LayerRun::Ran::launches).median();
    }
    describe_kernels(row, b, a);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Which rows have each kernel among their gone (or new) kernels, for narrate_kernels: rows
// sorted by name, so the rows below a layer ("h.*.attn" -> "h.*.attn.core") are one stretch
// found by binary search, not a scan of every row per kernel (quadratic with the thousands of
// layers of PyTorch's emit_nvtx ranges kept per op, --by block).
class KernelHomes {
 public:
  explicit KernelHomes(const std::vector<DiffRow>& rows) : rows_(rows) {
    for (size_t i = 0; i < rows.size(); ++i) {
      for (const auto& g : rows[i].gone) gone_[g.first].push_back(i);
      for (const auto& a : rows[i].added) added_[a.first].push_back(i);
    }
  }
  // Whether a row below `r` (deeper, its name r's and a dot on) has kernel k gone (or new).
  bool told_deeper(const DiffRow& r, const std::string& k, bool gone) const {
    const auto& table = gone ? gone_ : added_;
    const auto it = table.find(k);
    if (it == table.end()) return false;
    const std::string prefix = r.name + ".";
    for (size_t i = first_from(it->second, prefix); i < it->second.size(); ++i) {
      const DiffRow& c = rows_[it->second[i]];
      if (c.name.compare(0, prefix.size(), prefix) != 0) break;
      if (c.depth > r.depth) return true;
    }
    return false;
  }
  // The innermost layers that gained kernel k (not their parents too), by name.
  const std::vector<std::string>& new_homes(const std::string& k) {
    auto [cached, fresh] = innermost_.try_emplace(k);
    if (!fresh) return cached->second;
    const auto it = added_.find(k);
    if (it == added_.end()) return cached->second;
    for (size_t i = 0; i < it->second.size(); ++i) {
      const std::string prefix = rows_[it->second[i]].name + ".";
      const size_t j = first_from(it->second, prefix);
      const bool parent = j < it->second.size() && rows_[it->second[j]].name.compare(0, prefix.size(), prefix) == 0;
      if (!parent) cached->second.push_back(rows_[it->second[i]].name);
    }
    return cached->second;
  }
  bool gained_anywhere(const std::string& k) const { return added_.count(k) > 0; }
  // The row named `name`, or null.
  const DiffRow* row(const std::string& name) const {
    const auto it = std::lower_bound(rows_.begin(), rows_.end(), name,
                                     [](const DiffRow& r, const std::string& n) { return r.name < n; });
    return it != rows_.end() && it->name == name ? &*it : nullptr;
  }

 private:
  // The first of `rows` (indices, by name) whose name is not below `name`.
  size_t first_from(const std::vector<size_t>& rows, const std::string& name) const {
    return static_cast<size_t>(std::lower_bound(rows.begin(), rows.end(), name,
                                                [this](size_t i, const std::string& n) { return rows_[i].name < n; }) -
                               rows.begin());
  }
  const std::vector<DiffRow>& rows_;
  std::unordered_map<std::string, std::vector<size_t>> gone_, added_;  // kernel -> rows, by name
  std::unordered_map<std::string, std::vector<std::string>> innermost_;
};

// At most this many layers are named as a gone kernel's new home; the note counts the rest.
constexpr size_t kHomesNamed = 10;

// Words for the kernels of each row (DiffRow::kernel_note): where a gone kernel now lives, or
// that its layer lost a kernel (fused into a neighbour, as a GELU moved into the GEMM's
// epilogue). `rows` are by name (layer_rows' order).
void narrate_kernels(std::vector<DiffRow>& rows) {
  KernelHomes homes(rows);
  std::vector<std::string> notes(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const DiffRow& r = rows[i];
    // A kernel change is told on the innermost row that has it, not again on every parent.
    std::vector<std::pair<std::string, double>> gone, added;
    for (const auto& g : r.gone)
      if (!homes.told_deeper(r, g.first, true)) gone.push_back(g);
    for (const auto& a : r.added)
      if (!homes.told_deeper(r, a.first, false)) added.push_back(a);
    std::string note;
    for (const auto& [k, c] : gone) {
      note += (note.empty() ? "" : "; ") + k + " gone (" + calls_str(c) + "/iter before)";
      std::string moved;  // the innermost layers that gained it (not their parents too)
      size_t named = 0, more = 0;
      for (const std::string& l : homes.new_homes(k)) {
        if (l == r.name) continue;
        if (named == kHomesNamed) {
          ++more;
          continue;
        }
        moved += (moved.empty() ? "" : ", ") + l;
        ++named;
      }
      if (more) moved += format(" and %zu more layers", more);
      if (!moved.empty()) note += ", now in " + moved;
    }
    for (const auto& [k, c] : added) note += (note.empty() ? "" : "; ") + k + " new (" + calls_str(c) + "/iter)";
    if (!gone.empty() && r.label != Label::OnlyBefore && r.kernels_after < r.kernels_before)
      note += format("; %s kernels per iteration %s -> %s: work fused into fewer kernels", r.name.c_str(),
                     calls_str(r.kernels_before).c_str(), calls_str(r.kernels_after).c_str());
    // A layer gone with its kernels (laptime's h.*.mlp.gelu once the GELU runs in the c_fc
    // GEMM's epilogue): when the enclosing layer now runs fewer kernels, say it was fused.
    if (r.label == Label::OnlyBefore && r.name.find('.') != std::string::npos) {
      const DiffRow* p = homes.row(r.name.substr(0, r.name.rfind('.')));
      if (p && p->label != Label::OnlyBefore && p->kernels_after < p->kernels_before) {
        bool anywhere = false;
        for (const auto& [k, c] : gone) anywhere = anywhere || homes.gained_anywhere(k);
        if (!anywhere)
          note += format(
              "; the layer is gone and %s runs %s -> %s kernels per iteration: its work was fused "
              "into another kernel there",
              p->name.c_str(), calls_str(p->kernels_before).c_str(), calls_str(p->kernels_after).c_str());
      }
    }
    notes[i] = std::move(note);
  }
  for (size_t i = 0; i < rows.size(); ++i) rows[i].kernel_note = std::move(notes[i]);
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

// "The two runs differ in model (gpt2 -> resnet50), GPU (...) and software (torch 2.5 -> 2.6): ...";
// one difference alone is the run's A/B: "... differ in switches (LAPTIME_CUTLASS_PDL unset -> on)
// only: the change below is its effect.".
std::string differences_note(const std::vector<RunDifference>& diffs) {
  std::vector<std::string> parts, software, switches;
  for (const RunDifference& x : diffs) {
    const bool core =
        x.what == "model" || x.what == "precision" || x.what == "shape" || x.what == "mode" || x.what == "GPU";
    if (core)
      parts.push_back(x.what + " (" + x.before + " -> " + x.after + ")");
    else
      (x.what.rfind("LAPTIME_", 0) == 0 ? switches : software).push_back(x.what + " " + x.before + " -> " + x.after);
  }
  auto group = [&parts](const char* name, const std::vector<std::string>& items) {
    if (items.empty()) return;
    std::string s = std::string(name) + " (";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    parts.push_back(s + ")");
  };
  group("software", software);
  group("switches", switches);
  std::string list;
  for (size_t i = 0; i < parts.size(); ++i) list += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  if (diffs.size() == 1) return "The two runs differ in " + list + " only: the change below is its effect.";
  return "The two runs differ in " + list +
         ": the change below is all of these at once, not the effect of one "
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
  // Switches where both reports record them: one set on one side only is set against "unset"
  // (its default), the usual A/B of one switch.
  if (b.switches && a.switches) {
    auto value = [](const std::map<std::string, std::string>& m, const std::string& name) {
      const auto it = m.find(name);
      return it == m.end() ? std::string("unset") : it->second;
    };
    std::set<std::string> names;
    for (const auto* m : {&*b.switches, &*a.switches})
      for (const auto& entry : *m) names.insert(entry.first);
    for (const std::string& name : names) compare(name.c_str(), value(*b.switches, name), value(*a.switches, name));
  }
  return out;
}

namespace {

// Energy per forward on both sides (EnergyRow), or a note when only one side has it.
void compare_energy(Diff& d, const DiffSide& before, const DiffSide& after, const DiffOptions& o) {
  if (before.energy && after.energy) {
    const EnergyBlocks &b = *before.energy, &a = *after.energy;
    EnergyRow e;
    e.before_j = stats::ratio_of_sums(b.joules, b.laps);
    e.after_j = stats::ratio_of_sums(a.joules, a.laps);
    e.change_j = e.after_j - e.before_j;
    e.change_pct = e.before_j > 0 ? 100 * e.change_j / e.before_j : 0;
    e.ci = stats::bootstrap_ratio_change(b.joules, b.laps, a.joules, a.laps, o.resamples, o.seed);
    DiffOptions relative = o;  // joules have no microsecond floor
    relative.min_change_us = 0;
    e.label = classify_change(e.before_j, e.change_j, e.ci, relative);
    e.same_within = same_within(e.label, e.before_j, e.ci, relative);
    d.energy = e;
    return;
  }
  if (!before.energy && !after.energy) return;
  const DiffSide& none = before.energy ? after : before;
  d.notes.push_back("Energy per forward is compared when both sides are bench reports that measured it: " +
                    std::string(before.energy ? "after" : "before") + " (" + none.file + ") has none" +
                    (none.no_energy.empty() ? "." : ": " + one_line(none.no_energy) + "."));
}

}  // namespace

Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o) {
  Diff d;
  d.options = o;
  // Before every other note: a diff of two different things (a GPT-2 bf16 run on an H200
  // against a ResNet-50 fp32 run on an A100) printed its verdict without a word about it.
  d.differences = run_differences(before, after);
  if (!d.differences.empty()) d.notes.push_back(differences_note(d.differences));
  Resamples resamples(o);
  const DiffRow whole = whole_iteration(before, after, o, resamples);
  if (!before.steady_ops.empty() && !after.steady_ops.empty() && (before.graph_work || after.graph_work))
    d.notes.push_back(where_time_went(before, after, whole));
  if (before.kind != after.kind)
    d.notes.push_back("The two sides measure an iteration differently (" + before.measure + " vs " + after.measure +
                      "): read the iteration row with care; layers need traces on both sides.");
  if (before.iteration_ns.size() < 10 || after.iteration_ns.size() < 10)
    d.notes.push_back(
        format("Few steady iterations (%zu before, %zu after): the intervals are wide; run more "
               "iterations (bench --iters) for a sharper answer.",
               before.iteration_ns.size(), after.iteration_ns.size()));
  const bool told_layers = borrow_missing_layers(before, after, o, d.notes);
  d.rows.push_back(whole);
  if (before.has_layers && after.has_layers) {
    std::vector<DiffRow> rows = layer_rows(before, after, o, resamples);
    narrate_kernels(rows);
    std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
      return std::fabs(x.change_ns) > std::fabs(y.change_ns);
    });
    for (DiffRow& r : rows) d.rows.push_back(std::move(r));
  } else if (!told_layers) {
    d.notes.push_back(
        "Layers are compared only when both sides are traces with NVTX layer ranges: this diff has "
        "the whole iteration only.");
  }
  add_roofline(d, before, after, o);
  compare_energy(d, before, after, o);
  for (const DiffSide* r : {&before, &after})
    for (const std::string& n : r->notes) d.notes.push_back((r == &before ? "before: " : "after: ") + n);
  apply_gate(d, o);
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

}  // namespace laptime::trace
