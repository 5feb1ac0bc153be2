#include "trace/write/diff_json.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "trace/analyses/roofline.h"
#include "trace/write/analysis_json.h"
#include "trace/analyses/top.h"

namespace laptime::trace {

namespace {

// A SAME that is a real change under the line: the bound it stays within (a row's or the energy's).
nlohmann::json within_json(const DiffRow::Within& w) {
  return w.relative ? nlohmann::json{{"pct", w.bound}} : nlohmann::json{{"us", w.bound}};
}

}  // namespace

nlohmann::json diff_to_json(const Diff& d) {
  using nlohmann::json;
  auto side = [](const DiffSide& r) {
    return json{{"file", r.file},
                {"kind", r.kind},
                {"source", r.source},
                {"measure", r.measure},
                {"warmup", r.warmup},
                {"warmup_rule", r.warmup_rule},
                {"steady_iterations", r.iteration_ns.size()},
                {"iteration_ns", r.iteration_ns},
                {"settling", settling_json(r.settling, r.warmup, [&r](size_t i) { return r.number_of(i); })},
                {"layers", r.has_layers}};
  };
  const DiffOptions& o = d.options;
  json j;
  j["schema"] = "laptime.diff/1";
  j["before"] = side(d.before);
  j["after"] = side(d.after);
  j["method"] = {{"statistic", "median over steady iterations"},
                 {"interval", "percentile bootstrap of median(after) - median(before), sides resampled independently"},
                 {"level", 0.95},
                 {"resamples", o.resamples},
                 {"seed", o.seed},
                 {"threshold_pct", o.threshold_pct},
                 {"min_change_us", o.min_change_us},
                 {"by", o.by == LayerKey::Folded ? "layer" : "block"},
                 {"layer_time", "sum of GPU durations of the work launched inside the range, nested ranges included"}};
  j["notes"] = d.notes;
  if (!d.differences.empty()) {  // only when there are some: the reports of like runs stay as they were
    json diffs = json::array();
    for (const RunDifference& x : d.differences)
      diffs.push_back({{"what", x.what}, {"before", x.before}, {"after", x.after}});
    j["differences"] = diffs;
  }
  json rows = json::array();
  // The whole iteration (always the first row) and the layers, all of them unless --top is given.
  const size_t shown = 1 + json_rows(o.top, d.rows.size() - 1);
  for (size_t i = 0; i < shown; ++i) {
    const DiffRow& r = d.rows[i];
    auto kernels = [](const std::vector<std::pair<std::string, double>>& v) {
      json a = json::array();
      for (const auto& [k, c] : v) a.push_back({{"name", k}, {"per_iteration", c}});
      return a;
    };
    json x{{"name", r.name},           {"whole_iteration", r.whole},
           {"depth", r.depth},         {"label", label_name(r.label)},
           {"before_ns", r.before_ns}, {"after_ns", r.after_ns},
           {"change_ns", r.change_ns}, {"change_pct", r.change_pct}};
    if (r.label != Label::OnlyBefore && r.label != Label::OnlyAfter) {
      x["ci_ns"] = {r.ci.lo, r.ci.hi};
      if (r.before_ns > 0) x["ci_pct"] = {100 * r.ci.lo / r.before_ns, 100 * r.ci.hi / r.before_ns};
      x["interval_excludes_zero"] = r.ci.excludes_zero();
    }
    if (r.same_within) x["same_within"] = within_json(*r.same_within);
    if (!r.whole || (!d.before.steady_ops.empty() && !d.after.steady_ops.empty())) {
      x["kernels"] = {{"before", r.kernels_before}, {"after", r.kernels_after}};
      if (r.whole && d.before.graph_replays) x["kernels"]["before"] = nullptr;  // not in the trace
      if (r.whole && d.after.graph_replays) x["kernels"]["after"] = nullptr;
      x["launches"] = {{"before", r.launches_before}, {"after", r.launches_after}};
    }
    auto point = [](const std::optional<RooflinePoint>& p) -> json {
      if (!p) return nullptr;
      json q{{"intensity_flop_per_byte", p->intensity}, {"tflops", p->tflops}, {"gbps", p->gbps}};
      if (p->has_bound) {
        q["bound"] = roof_bound_name(p->bound);
        q["pct_of_bound"] = p->pct_of_bound;
      }
      return q;
    };
    if (r.roof_before || r.roof_after)
      x["roofline"] = {{"before", point(r.roof_before)}, {"after", point(r.roof_after)}};
    if (!r.whole) {
      x["kernels_gone"] = kernels(r.gone);
      x["kernels_new"] = kernels(r.added);
      x["kernel_note"] = r.kernel_note;
    }
    rows.push_back(std::move(x));
  }
  j["rows"] = std::move(rows);
  if (shown < d.rows.size()) j["rows_omitted"] = d.rows.size() - shown;
  if (d.energy) {  // only when both sides measured it: other diffs' reports stay as they were
    const EnergyRow& e = *d.energy;
    j["energy"] = {{"measure", "joules per forward: NVML's energy counter, each bench report's blocks"},
                   {"before_j", e.before_j},
                   {"after_j", e.after_j},
                   {"change_j", e.change_j},
                   {"change_pct", e.change_pct},
                   {"ci_j", {e.ci.lo, e.ci.hi}},
                   {"label", energy_label_name(e.label)}};
    if (e.before_j > 0) j["energy"]["ci_pct"] = {100 * e.ci.lo / e.before_j, 100 * e.ci.hi / e.before_j};
    if (e.same_within) j["energy"]["same_within"] = within_json(*e.same_within);
  }
  json gate = nullptr;
  if (o.fail_if_slower_pct)
    gate = {{"fail_if_slower_pct", *o.fail_if_slower_pct},
            {"failed", d.gate_failed},
            {"reasons", d.gate_reasons},
            {"exit_code", d.gate_failed ? 3 : 0}};
  j["gate"] = gate;
  return j;
}

}  // namespace laptime::trace
