#include "trace/ncu/ncu_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "trace/model/text.h"
#include "trace/model/format.h"

namespace laptime::trace {
namespace {

using detail::format;

bool known(double v) { return !std::isnan(v); }
nlohmann::json value(double v) { return known(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::vector<std::string> minus(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  std::vector<std::string> out;
  for (const std::string& s : x)
    if (std::find(y.begin(), y.end(), s) == y.end()) out.push_back(s);
  return out;
}

// "a -> b" for one metric of a row; "-" for a side without the layer or the value.
std::string pair(const NcuLayer* a, const NcuLayer* b, const char* f, double (*get)(const NcuLayer&)) {
  auto one = [&](const NcuLayer* x) { return x && known(get(*x)) ? format(f, get(*x)) : std::string("-"); };
  return one(a) + " -> " + one(b);
}

// The relative change of a metric, "-" when a side lacks it.
std::string change(const NcuLayer* a, const NcuLayer* b, double (*get)(const NcuLayer&)) {
  if (!a || !b || !known(get(*a)) || !known(get(*b)) || get(*a) <= 0) return "-";
  return format("%+.1f%%", 100 * (get(*b) / get(*a) - 1));
}

double time_us(const NcuLayer& x) { return x.time_ns / 1e3; }
double kernels(const NcuLayer& x) { return static_cast<double>(x.kernels); }
double dram_mb(const NcuLayer& x) { return x.dram_bytes / 1e6; }
double ratio(const NcuLayer& x) { return x.m.bytes_ratio; }
double dram_pct(const NcuLayer& x) { return x.m.dram_pct; }
double memory_pct(const NcuLayer& x) { return x.m.memory_pct; }
double compute_pct(const NcuLayer& x) { return x.m.compute_pct; }
double occupancy(const NcuLayer& x) { return x.m.occupancy_pct; }
double warps(const NcuLayer& x) { return x.m.warps_per_scheduler; }

nlohmann::json side(const NcuLayers& l) {
  return {{"source", l.source}, {"kernels", l.kernels}, {"time_ns", l.time_ns}, {"dram_bytes", value(l.dram_bytes)}};
}

// What differs between the two runs, as `laptime diff` says it (trace/compare/diff.h): the program
// ncu profiled, and the model, precision and shape of the layer costs beside each report; and
// a pair that shares no layer at all compares unrelated kernels. "" when nothing is known to differ.
std::string differences_note(const NcuDiff& d) {
  const NcuLayers &a = d.a, &b = d.b;
  std::vector<std::string> parts;
  auto compare = [&](const char* what, const std::string& x, const std::string& y) {
    if (!x.empty() && !y.empty() && x != y) parts.push_back(std::string(what) + " (" + x + " -> " + y + ")");
  };
  compare("program", a.process, b.process);
  if (a.costs && b.costs) {
    compare("model", a.costs->model, b.costs->model);
    compare("precision", a.costs->precision, b.costs->precision);
    compare("shape", a.costs->shape, b.costs->shape);
  }
  const bool shared = std::any_of(d.rows.begin(), d.rows.end(), [](const NcuLayerChange& c) {
    return c.a >= 0 && c.b >= 0 && c.name != "(no range)";
  });
  const bool ranged =
      std::any_of(a.layers.begin(), a.layers.end(), [](const NcuLayer& x) { return x.name != "(no range)"; });
  if (parts.empty())
    return shared || !ranged ? ""
                             : "A and B share no layer: they ran different programs or different NVTX ranges, so the "
                               "change of GPU time compares unrelated kernels.";
  std::string list;
  for (size_t i = 0; i < parts.size(); ++i) list += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return "The two reports differ in " + list +
         ": the change below is all of these at once, not the effect of one change; compare reports that differ in "
         "one thing only to attribute it.";
}

}  // namespace

NcuDiff ncu_diff(NcuLayers a, NcuLayers b) {
  if (a.by != b.by || a.domain != b.domain)
    throw TraceError("the two reports must be grouped the same way to be compared.");
  NcuDiff d;
  d.a = std::move(a);
  d.b = std::move(b);
  std::map<std::string, int> in_b;
  for (size_t i = 0; i < d.b.layers.size(); ++i) in_b.emplace(d.b.layers[i].name, static_cast<int>(i));
  std::vector<bool> matched(d.b.layers.size(), false);
  for (size_t i = 0; i < d.a.layers.size(); ++i) {
    NcuLayerChange c;
    c.name = d.a.layers[i].name;
    c.a = static_cast<int>(i);
    if (auto it = in_b.find(c.name); it != in_b.end()) {
      c.b = it->second;
      matched[static_cast<size_t>(c.b)] = true;
    }
    const std::vector<std::string> none;
    const auto& ka = d.a.layers[i].kernel_names;
    const auto& kb = c.b >= 0 ? d.b.layers[static_cast<size_t>(c.b)].kernel_names : none;
    c.gone = minus(ka, kb);
    c.added = minus(kb, ka);
    d.rows.push_back(std::move(c));
  }
  for (size_t i = 0; i < d.b.layers.size(); ++i)
    if (!matched[i]) {
      NcuLayerChange c;
      c.name = d.b.layers[i].name;
      c.b = static_cast<int>(i);
      c.added = d.b.layers[i].kernel_names;
      d.rows.push_back(std::move(c));
    }
  if (const std::string n = differences_note(d); !n.empty()) d.notes.push_back(n);
  if (!d.a.gpu.empty() && !d.b.gpu.empty() && d.a.gpu != d.b.gpu)
    d.notes.push_back("A ran on " + d.a.gpu + ", B on " + d.b.gpu + ": the change is not the kernels' alone.");
  return d;
}

void print_ncu_diff(const NcuDiff& d, std::FILE* out) {
  auto line = [&](const char* tag, const NcuLayers& l) {
    std::fprintf(out, "  %s  %s: %s, %.1f us of GPU time, %s from DRAM\n", tag, escape_name(l.source).c_str(),
                 detail::plural(l.kernels, "kernel", "kernels").c_str(), l.time_ns / 1e3,
                 known(l.dram_bytes) ? format("%.2f MB", l.dram_bytes / 1e6).c_str() : "- MB");
  };
  line("A", d.a);
  line("B", d.b);
  std::fprintf(out, "  change  GPU time %+.1f%% (each kernel timed alone by ncu: the kernels' own time, not the lap)\n",
               d.a.time_ns > 0 ? 100 * (d.b.time_ns / d.a.time_ns - 1) : 0.0);
  std::fprintf(out, "  layers  innermost NVTX range, block indices %s\n",
               d.a.by == LayerKey::Folded ? "folded (--by block keeps them)" : "kept");
  for (const std::string& n : d.notes) detail::print_wrapped(out, "note: " + escape_name(n), 2);

  std::fprintf(out, "\nPer layer, A -> B\n");
  // moved/must only when a side has the layer costs.
  const bool costs = d.a.costs || d.b.costs;
  std::vector<std::vector<std::string>> rows{{"layer", "kernels", "time (us)", "change", "DRAM (MB)", "change",
                                              "moved/must", "DRAM %", "memory %", "compute %", "occupancy %",
                                              "warps/sched"}};
  for (const NcuLayerChange& c : d.rows) {
    const NcuLayer* a = c.a >= 0 ? &d.a.layers[static_cast<size_t>(c.a)] : nullptr;
    const NcuLayer* b = c.b >= 0 ? &d.b.layers[static_cast<size_t>(c.b)] : nullptr;
    rows.push_back({escape_name(c.name), pair(a, b, "%.0f", kernels), pair(a, b, "%.1f", time_us),
                    a && b ? change(a, b, time_us) : (a ? "only A" : "only B"), pair(a, b, "%.2f", dram_mb),
                    change(a, b, dram_mb), pair(a, b, "%.2f", ratio), pair(a, b, "%.1f", dram_pct),
                    pair(a, b, "%.1f", memory_pct), pair(a, b, "%.1f", compute_pct), pair(a, b, "%.1f", occupancy),
                    pair(a, b, "%.1f", warps)});
  }
  if (!costs)
    for (auto& r : rows) r.erase(r.begin() + 6);
  detail::print_table(out, rows, costs ? "lrrrrrrrrrrr" : "lrrrrrrrrrr", 2);

  std::fprintf(out, "\nKernels gone and new\n");
  bool any = false;
  for (const NcuLayerChange& c : d.rows) {
    if (c.gone.empty() && c.added.empty()) continue;
    any = true;
    std::fprintf(out, "  %s\n", escape_name(c.name).c_str());
    for (const std::string& k : c.gone) std::fprintf(out, "    gone  %s\n", escape_name(k).c_str());
    for (const std::string& k : c.added) std::fprintf(out, "    new   %s\n", escape_name(k).c_str());
  }
  if (!any) std::fprintf(out, "  none: every layer runs the same kernels\n");

  std::fprintf(out, "\nDiagnosis, A then B\n");
  for (const NcuLayerChange& c : d.rows) {
    std::fprintf(out, "  %s\n", escape_name(c.name).c_str());
    for (const auto& [tag, l, i] : {std::tuple<const char*, const NcuLayers&, int>{"A", d.a, c.a}, {"B", d.b, c.b}}) {
      if (i < 0) {
        std::fprintf(out, "    %s  (not in this report)\n", tag);
        continue;
      }
      const NcuDiagnosis& g = l.layers[static_cast<size_t>(i)].diagnosis;
      detail::print_wrapped(out, std::string(tag) + "  [" + ncu_rule_name(g.rule) + "] " + g.text, 4);
    }
  }
}

nlohmann::json ncu_diff_to_json(const NcuDiff& d, DeferredKernelLists* deferred) {
  nlohmann::json j{{"schema", "laptime.kernels.diff/1"},
                   {"a", side(d.a)},
                   {"b", side(d.b)},
                   {"grouping", {{"by", d.a.by == LayerKey::Folded ? "layer" : "block"}, {"domain", d.a.domain}}},
                   {"notes", d.notes},
                   {"layers", nlohmann::json::array()}};
  for (const NcuLayerChange& c : d.rows) {
    const NcuLayer* a = c.a >= 0 ? &d.a.layers[static_cast<size_t>(c.a)] : nullptr;
    const NcuLayer* b = c.b >= 0 ? &d.b.layers[static_cast<size_t>(c.b)] : nullptr;
    nlohmann::json row{{"name", c.name},
                       {"a", a ? ncu_layer_to_json(*a, deferred) : nlohmann::json(nullptr)},
                       {"b", b ? ncu_layer_to_json(*b, deferred) : nlohmann::json(nullptr)},
                       {"gone", c.gone},
                       {"new", c.added}};
    if (a && b) {
      row["change"] = {
          {"kernels", static_cast<double>(b->kernels) - static_cast<double>(a->kernels)},
          {"time_ns", b->time_ns - a->time_ns},
          {"time_pct", a->time_ns > 0 ? value(100 * (b->time_ns / a->time_ns - 1)) : nlohmann::json(nullptr)},
          {"dram_bytes", value(b->dram_bytes - a->dram_bytes)},
          {"dram_pct_points", value(b->m.dram_pct - a->m.dram_pct)},
          {"memory_pct_points", value(b->m.memory_pct - a->m.memory_pct)},
          {"compute_pct_points", value(b->m.compute_pct - a->m.compute_pct)},
          {"occupancy_pct_points", value(b->m.occupancy_pct - a->m.occupancy_pct)}};
    }
    j["layers"].push_back(std::move(row));
  }
  return j;
}

}  // namespace laptime::trace
