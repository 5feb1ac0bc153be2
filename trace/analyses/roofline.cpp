#include "trace/analyses/roofline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/os.h"
#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

// The iterations the analysis measures: Iteration::steady() where the analysis has it (warm-up
// and host-ahead iterations left out), else every one not marked warm-up.
template <class I>
auto is_steady(const I& it, int) -> decltype(it.steady()) {
  return it.steady();
}
template <class I>
bool is_steady(const I& it, long) {
  return !it.warmup;
}

}  // namespace

// --- One point ---------------------------------------------------------------------------

const char* roof_bound_name(RoofBound b) { return b == RoofBound::Compute ? "compute" : "memory"; }

RooflinePoint roofline_point(double flops, double bytes, double seconds, const Ceilings* ceilings,
                             const std::string& precision) {
  RooflinePoint p;
  p.intensity = bytes > 0 ? flops / bytes : 0;
  if (seconds > 0) {
    p.tflops = flops / seconds / 1e12;
    p.gbps = bytes / seconds / 1e9;
  }
  if (!ceilings) return p;
  const double peak = ceilings->tflops(precision), bw = ceilings->copy_gbps;
  const double ridge = peak * 1e3 / bw;  // FLOP/byte: TFLOP/s over GB/s
  p.has_bound = true;
  p.bound = p.intensity >= ridge ? RoofBound::Compute : RoofBound::Memory;
  p.attainable_tflops = std::min(peak, p.intensity * bw / 1e3);
  p.pct_of_bound = 100 * (p.bound == RoofBound::Compute ? p.tflops / peak : p.gbps / bw);
  return p;
}

// --- The whole run -----------------------------------------------------------------------

Roofline compute_roofline(const TraceJoin& j, const Analysis& a, const LayerCosts& costs,
                          const std::optional<Ceilings>& ceilings) {
  const Trace& t = j.trace();
  Roofline r;
  r.costs = costs;
  r.ceilings = ceilings;
  if (ceilings) {
    r.peak_tflops = ceilings->tflops(costs.precision);
    r.peak_gbps = ceilings->copy_gbps;
    r.ridge = r.peak_tflops * 1e3 / r.peak_gbps;
  }
  std::set<int> steady, iterations;
  for (const Iteration& it : a.iterations) {
    iterations.insert(it.nvtx);
    if (is_steady(it, 0)) steady.insert(it.nvtx);
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < costs.layers.size(); ++i) index[costs.layers[i].name] = i;

  // GPU time under each named range, descendants included, over the steady iterations: the ranges
  // of an operation's layer (for a graph node's work, those it was captured in; trace/analyses/graph.h).
  std::vector<double> total_ns(costs.layers.size(), 0.0);
  const auto is_iteration = [&](int n) { return iterations.count(n) > 0; };
  for (const GpuOp& op : j.ops()) {
    bool in_steady = false;
    for (int n = op.range; n >= 0 && !in_steady; n = t.nvtx[n].parent) in_steady = steady.count(n) > 0;
    if (!in_steady) continue;
    for (int n : j.layer_chain(op, is_iteration))
      if (auto it = index.find(t.nvtx[n].text); it != index.end())
        total_ns[it->second] += static_cast<double>(op.end - op.start);
  }

  // Report the finest measured ranges: a measured entry none of whose parts was measured.
  std::set<std::string> measured_parents;
  for (size_t i = 0; i < costs.layers.size(); ++i)
    if (total_ns[i] > 0 && !costs.layers[i].parent.empty()) measured_parents.insert(costs.layers[i].parent);
  const double n_steady = static_cast<double>(std::max<size_t>(steady.size(), 1));
  std::vector<std::string> missing;
  for (size_t i = 0; i < costs.layers.size(); ++i) {
    const LayerCostEntry& e = costs.layers[i];
    if (total_ns[i] <= 0) {
      missing.push_back(e.name);
      continue;
    }
    if (measured_parents.count(e.name)) continue;
    RooflineRow row{e.name, e.kind, 1, e.flops, e.bytes(), total_ns[i] / n_steady, {}, costs.precision_of(e)};
    row.point =
        roofline_point(row.flops, row.bytes, row.time_ns * 1e-9, ceilings ? &*ceilings : nullptr, row.precision);
    r.layers.push_back(std::move(row));
  }
  if (r.layers.empty())
    throw TraceError("no range in the steady iterations of this trace is named like a layer of " + costs.source + " (" +
                     costs.model +
                     "): capture with `--nvtx layer` (or block); a --graph run under nsys needs "
                     "`--cuda-graph-trace=node`.");
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 6; ++i) list += (i ? ", " : "") + missing[i];
    r.notes.push_back(std::to_string(missing.size()) + " of " + std::to_string(costs.layers.size()) +
                      " layers of the sidecar have no GPU work under a range of their name (a coarser --nvtx level, "
                      "or fused into a neighbour): " +
                      list + (missing.size() > 6 ? ", ..." : "") + ".");
  }

  // Folded: one row per block-index pattern and identical cost.
  std::map<std::tuple<std::string, double, double>, size_t> group;
  std::vector<std::vector<const RooflineRow*>> members;
  for (const RooflineRow& row : r.layers) {
    const auto key = std::make_tuple(detail::fold_indices(row.name) + " " + row.precision, row.flops, row.bytes);
    auto [it, fresh] = group.try_emplace(key, r.folded.size());
    if (fresh) {
      r.folded.push_back(row);
      members.emplace_back();
    }
    members[it->second].push_back(&row);
  }
  for (size_t g = 0; g < r.folded.size(); ++g) {
    RooflineRow& f = r.folded[g];
    f.instances = members[g].size();
    if (f.instances == 1) continue;
    f.name = detail::fold_indices(f.name);
    double sum = 0;
    for (const RooflineRow* m : members[g]) sum += m->time_ns;
    f.time_ns = sum / static_cast<double>(f.instances);
    f.point = roofline_point(f.flops, f.bytes, f.time_ns * 1e-9, ceilings ? &*ceilings : nullptr, f.precision);
  }
  // Layers that compute in another precision than the run's are bounded by that one's ceiling.
  std::string other;
  for (const RooflineRow& f : r.folded)
    if (f.precision != costs.precision) other += (other.empty() ? "" : ", ") + f.name + " (" + f.precision + ")";
  if (!other.empty())
    r.notes.push_back(other +
                      " compute in another precision than the run's: their bound is that precision's "
                      "ceiling.");
  return r;
}

const char* const kRooflineNeedsCeilings =
    "the roofline plot needs the device's ceilings: run `laptime peak`, or pass --peak FILE.";

RooflineInputs read_roofline_inputs(const std::string& trace_file, const std::string& layers_file,
                                    const std::string& peak_file) {
  RooflineInputs in;
  in.trace_file = trace_file;
  in.costs_named = !layers_file.empty();
  const std::string layers = in.costs_named ? layers_file : layer_costs_path(trace_file);
  if (in.costs_named || path_exists(layers)) in.costs = read_layer_costs(layers);
  if (!peak_file.empty()) in.ceilings = find_ceilings(peak_file, "").ceilings;
  return in;
}

void add_cached_ceilings(const TraceJoin& j, RooflineInputs& in) {
  if (in.ceilings) return;
  const std::vector<Gpu>& gpus = j.trace().gpus;
  const uint32_t device = j.ops().empty() ? 0 : j.ops().front().device;
  const auto g = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& x) { return x.id == device; });
  const std::string gpu = g != gpus.end() ? g->name : gpus.empty() ? "" : gpus.front().name;
  FoundCeilings found = find_ceilings("", gpu);  // a damaged cache: achieved rates only, and a note saying why
  in.ceilings = std::move(found.ceilings);
  in.cache_note = std::move(found.note);
}

std::string roofline_svg_refusal(const RooflineInputs& in) {
  if (!in.costs)
    return "--roofline-svg needs the layer costs: " + layer_costs_path(in.trace_file) +
           " is missing; pass --layers FILE, or capture with `laptime bench --trace` or --json.";
  if (!in.ceilings) return kRooflineNeedsCeilings;
  return "";
}

std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const RooflineInputs& in) {
  if (!in.costs) return std::nullopt;
  Roofline r;
  try {
    r = compute_roofline(j, a, *in.costs, in.ceilings);
  } catch (const TraceError& e) {
    if (in.costs_named) throw;  // asked for by name: an error
    r.costs = *in.costs;        // found beside the trace (a --graph run has one too): a note, not an error
    r.ceilings = in.ceilings;
    r.notes.push_back(e.what());
    return r;
  }
  if (!in.cache_note.empty()) r.notes.push_back(in.cache_note);
  if (in.ceilings && !j.trace().gpus.empty()) {
    bool same = false;
    for (const Gpu& g : j.trace().gpus) same |= g.name == in.ceilings->gpu;
    if (!same)
      r.notes.push_back("the ceilings were measured on " + in.ceilings->gpu + ", the trace ran on " +
                        j.trace().gpus.front().name + ".");
  }
  return r;
}

std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const std::string& trace_file,
                                           const std::string& layers_file, const std::string& peak_file) {
  RooflineInputs in = read_roofline_inputs(trace_file, layers_file, peak_file);
  add_cached_ceilings(j, in);
  return roofline_for_trace(j, a, in);
}

}  // namespace laptime::trace
