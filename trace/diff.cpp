#include "trace/diff.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "trace/error.h"
#include "trace/nsys_sqlite.h"
#include "trace/svg.h"
#include "trace/text.h"
#include "trace/text_util.h"

namespace laptime::trace {

using detail::format;
using detail::print_wrapped;

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

Label classify_change(double before_median, double change, const Interval& ci, const DiffOptions& o) {
  if (!(before_median > 0)) return Label::Unclear;
  const double t = o.threshold_pct / 100 * before_median;  // the relative threshold, in ns
  const double a = o.min_change_us * 1000;                 // the absolute one
  if (ci.lo > 0 && change >= t && change >= a) return Label::Slower;
  if (ci.hi < 0 && change <= -t && change <= -a) return Label::Faster;
  if ((ci.lo >= -t && ci.hi <= t) || (ci.lo >= -a && ci.hi <= a)) return Label::Same;
  return Label::Unclear;
}

std::string warmup_warning(const SteadyState& s, size_t warmup, const std::string& what) {
  if (s.start <= warmup) return "";
  return format("Warm-up too short in %s: %zu iteration(s) dropped, but the per-iteration GPU time settles only "
                "from iteration %zu (steady band %.3f ms ± %.3f ms, from the last half); pass --skip-warmup %zu.",
                what.c_str(), warmup, s.start, s.median / 1e6, s.band / 1e6, s.start);
}

namespace {


// The iterations the analysis measures: one place to follow analyze's steady-state rule.
bool measured(const Iteration& it) { return it.steady(); }

}  // namespace

IterationSteadyState iteration_steady_state(const Analysis& a) {
  IterationSteadyState r;
  std::vector<double> series;
  std::vector<size_t> position;  // series index -> index into a.iterations
  bool leading = true;
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    const Iteration& it = a.iterations[i];
    if (it.warmup && leading) ++r.warmup;
    leading = leading && it.warmup;
    if (!it.has_gpu) continue;
    series.push_back(double(it.gpu_span()));
    position.push_back(i);
  }
  if (series.empty()) return r;
  r.steady = steady_state(series);
  const size_t start_series = r.steady.start;
  r.steady.start = start_series < position.size() ? position[start_series] : a.iterations.size();
  r.text = format("per-iteration GPU time settles from iteration %zu of %zu (band %.3f ms ± %.3f ms, median ± "
                  "max(5 x 1.4826 MAD, 2%%) of the last half); warm-up dropped %zu%s",
                  r.steady.start, a.iterations.size(), r.steady.median / 1e6, r.steady.band / 1e6, r.warmup,
                  r.steady.start > r.warmup ? ": too short" : ": enough");
  r.warning = warmup_warning(r.steady, r.warmup, "this trace");
  return r;
}

nlohmann::json steady_state_json(const IterationSteadyState& s) {
  return nlohmann::json{{"start", s.steady.start},
                        {"median_ns", s.steady.median},
                        {"band_ns", s.steady.band},
                        {"outside_band_after_start", s.steady.outside_late},
                        {"warmup", s.warmup},
                        {"warmup_too_short", s.steady.start > s.warmup},
                        {"rule", "median ± max(5 x 1.4826 MAD, 2% of the median) of the last half; starts after the "
                                 "last iteration of the first half outside that band"}};
}

namespace {

std::string read_head(const std::string& path, size_t n) {
  std::ifstream f(path, std::ios::binary);
  std::string s(n, '\0');
  f.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

bool looks_like_json(const std::string& path) {
  for (char c : read_head(path, 64))
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

void finish_series(DiffSide& r, const std::string& what) {
  r.steady = steady_state(r.series_ns);
  const std::string w = warmup_warning(r.steady, r.warmup, what);
  if (!w.empty()) r.notes.push_back(w);
}

// A `laptime bench --json` report (or torch_baseline.py's, same schema): per-iteration laps.
DiffSide run_from_bench_json(const std::string& path, const DiffOptions& o) {
  using nlohmann::json;
  json j;
  try {
    std::ifstream f(path);
    j = json::parse(f);
  } catch (const json::exception&) {
    throw TraceError(path + " is not valid JSON: expected a trace (nsys SQLite export) or a `laptime bench --json` report.");
  }
  if (!j.is_object() || j.value("schema", "") != "laptime.bench/1" || !j.contains("iterations") ||
      !j["iterations"].is_array())
    throw TraceError(path + " is JSON but not a `laptime bench --json` report (schema laptime.bench/1 with "
                            "per-iteration laps).");
  DiffSide r;
  r.file = path;
  r.kind = "bench report";
  r.measure = "CUDA-event lap per iteration";
  std::vector<bool> warm;
  try {
    const json cfg = j.value("config", json::object());
    r.source = j.value("framework", "laptime") + ", " + cfg.value("mode", "?") + ", " + cfg.value("precision", "?") +
               (j.contains("device") ? ", " + j["device"].value("name", "?") : "");
  if (j.contains("device") && j["device"].is_object()) r.gpu = j["device"].value("name", "");
    for (const json& it : j["iterations"]) {
      if (!it.is_object() || !it.contains("lap_ms") || !it["lap_ms"].is_number())
        throw TraceError(path + " has an iteration without a lap_ms number.");
      r.series_ns.push_back(it["lap_ms"].get<double>() * 1e6);
      warm.push_back(it.value("warmup", false));
    }
  } catch (const json::exception&) {
    throw TraceError(path + " is not a well-formed `laptime bench --json` report: a field has the wrong type.");
  }
  size_t marked = 0;
  if (r.series_ns.empty()) throw TraceError(path + " holds no iterations.");
  if (o.skip_warmup) {
    marked = static_cast<size_t>(*o.skip_warmup);
    r.warmup_rule = "the first " + std::to_string(marked) + " (--skip-warmup)";
  } else {
    while (marked < warm.size() && warm[marked]) ++marked;
    r.warmup_rule = "as marked in the report";
  }
  if (marked >= r.series_ns.size())
    throw TraceError(path + " has " + std::to_string(r.series_ns.size()) + " iterations and drops " +
                     std::to_string(marked) + " as warm-up: none left to compare.");
  r.warmup = marked;
  r.iteration_ns.assign(r.series_ns.begin() + static_cast<long>(marked), r.series_ns.end());
  finish_series(r, path);
  return r;
}

}  // namespace

DiffSide run_from_trace(const TraceJoin& j, const DiffOptions& o, const std::string& file) {
  const Trace& t = j.trace();
  ReportOptions ro;
  ro.range = o.range;
  ro.skip_warmup = o.skip_warmup;
  const Analysis a = analyze(j, ro);

  DiffSide r;
  r.file = file;
  r.kind = "trace";
  r.source = a.source + (a.gpu.empty() ? "" : ", " + a.gpu);
  r.measure = "GPU span of the `" + a.range_name + "` range (first start to last end of its GPU work)";
  r.warmup_rule = a.warmup_rule;
  r.notes = a.notes;

  // Iterations: their order, the steady ones, and which NVTX range is which.
  std::map<int, size_t> iteration_of_nvtx;  // nvtx index -> index into a.iterations
  std::vector<int> steady_slot(a.iterations.size(), -1);  // a.iterations index -> steady index
  size_t steady = 0;
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    const Iteration& it = a.iterations[i];
    iteration_of_nvtx[it.nvtx] = i;
    if (!it.has_gpu) continue;
      r.series_ns.push_back(double(it.gpu_span()));
    if (measured(it)) {
      steady_slot[i] = static_cast<int>(steady++);
      r.iteration_ns.push_back(double(it.gpu_span()));
    }
  }
  if (r.iteration_ns.empty())
    throw TraceError(file + ": no GPU work was launched inside the steady `" + a.range_name +
                     "` ranges (capture with --trace=cuda,nvtx), so there is nothing to compare.");
  const IterationSteadyState st = iteration_steady_state(a);
  r.steady = st.steady;
  r.warmup = st.warmup;
  if (!st.warning.empty()) r.notes.push_back(warmup_warning(st.steady, st.warmup, file));

  // Every op of a steady iteration, with the ranges of its launch's chain below the
  // iteration range (the layers it counts for).
  const int median_it = a.svg_iteration;
  r.steady_ops.resize(steady);
  for (const GpuOp& op : j.ops()) {
    std::vector<int> chain;  // below the iteration range, innermost first
    int iteration = -1;
    for (int rr = op.range; rr >= 0; rr = t.nvtx[rr].parent) {
      auto it = iteration_of_nvtx.find(rr);
      if (it != iteration_of_nvtx.end()) {
        iteration = static_cast<int>(it->second);
        break;
      }
      chain.push_back(rr);
    }
    if (iteration < 0 || steady_slot[iteration] < 0) continue;
    const Iteration& it = a.iterations[iteration];
    OpRecord rec;
    rec.start = op.start - it.gpu_start;
    rec.end = op.end - it.gpu_start;
    rec.label = op.label;
    rec.kernel = op.kind == GpuOp::Kind::Kernel;
    rec.api = op.api;
    rec.category = op.category;
    for (size_t c = chain.size(); c-- > 0;)  // outermost first
      rec.ranges.push_back(t.nvtx[chain[c]].text);
    r.steady_ops[steady_slot[iteration]].push_back(std::move(rec));
  }
  if (median_it >= 0 && steady_slot[median_it] >= 0) {
    r.median_steady = steady_slot[median_it];
    r.median_span = a.iterations[median_it].gpu_span();
  }
  aggregate_layers(r, o);
  if (!r.has_layers)
    r.notes.push_back(file + " has no NVTX ranges inside its iterations (or its kernels run from a CUDA Graph "
                             "launched outside them).");
  return r;
}

void aggregate_layers(DiffSide& r, const DiffOptions& o) {
  const size_t steady = r.steady_ops.size();
  std::map<std::string, LayerRun> layers;
  std::map<std::string, std::vector<std::set<int>>> launches;  // name -> per steady iteration: API calls
  auto layer = [&](const std::string& name, int depth) -> LayerRun& {
    LayerRun& l = layers[name];
    if (l.time_ns.empty()) {
      l.name = name;
      l.depth = depth;
      l.time_ns.assign(steady, 0);
      l.kernels.assign(steady, 0);
      l.launches.assign(steady, 0);
      launches[name].resize(steady);
    }
    return l;
  };
  bool any_layer = false;
  for (size_t s = 0; s < steady; ++s) {
    for (const OpRecord& op : r.steady_ops[s]) {
      std::set<std::string> seen;  // a folded name counts once per op
      std::vector<std::pair<std::string, int>> names;
      for (size_t c = 0; c < op.ranges.size(); ++c) {
        const std::string name = o.by == LayerKey::Folded ? fold_block_indices(op.ranges[c]) : op.ranges[c];
        if (seen.insert(name).second) names.emplace_back(name, static_cast<int>(c + 1));
      }
      if (names.empty()) names.emplace_back("(outside layers)", 1);
      else any_layer = true;
      const double d = double(op.end - op.start);
      for (const auto& [name, depth] : names) {
        LayerRun& l = layer(name, depth);
        l.time_ns[s] += d;
        if (op.kernel) {
          l.kernels[s] += 1;
          l.kernel_calls[op.label] += 1;
        }
        if (op.api >= 0) launches[name][s].insert(op.api);
      }
    }
  }
  r.has_layers = any_layer;
  r.layers.clear();
  if (any_layer) {
    for (auto& [name, l] : layers) {
      for (size_t s = 0; s < steady; ++s) l.launches[s] = double(launches[name][s].size());
      for (auto& [k, calls] : l.kernel_calls) calls /= double(steady);
      r.layers.push_back(std::move(l));
    }
  }
  // The median iteration's boxes for the SVG: kernels, and each range's extent on the GPU.
  r.median_kernels.clear();
  r.median_layers.clear();
  if (r.median_steady < 0) return;
  std::map<std::pair<int, std::string>, DiffBox> extents;  // (depth, range name) -> box
  std::vector<std::pair<int, std::string>> order;
  for (const OpRecord& op : r.steady_ops[r.median_steady]) {
    DiffBox k;
    k.start = op.start;
    k.end = op.end;
    k.name = op.label;
    k.category = op.category;
    r.median_kernels.push_back(k);
    for (size_t c = 0; c < op.ranges.size(); ++c) {
      const std::pair<int, std::string> key{static_cast<int>(c + 1), op.ranges[c]};
      auto [it, fresh] = extents.try_emplace(key);
      DiffBox& b = it->second;
      if (fresh) {
        b.name = op.ranges[c];
        b.depth = key.first;
        b.start = op.start;
        b.end = op.end;
        order.push_back(key);
      }
      b.start = std::min(b.start, op.start);
      b.end = std::max(b.end, op.end);
    }
  }
  for (const auto& key : order) r.median_layers.push_back(extents[key]);
}

bool borrow_layers(DiffSide& target, const DiffSide& from, const DiffOptions& o) {
  if (target.has_layers || !from.has_layers || from.median_steady < 0 || target.steady_ops.empty()) return false;
  // The reference: the kernels of the labelled side's median iteration, in order.
  std::vector<const OpRecord*> ref;
  for (const OpRecord& op : from.steady_ops[from.median_steady])
    if (op.kernel) ref.push_back(&op);
  for (const auto& ops : target.steady_ops) {
    size_t k = 0;
    for (const OpRecord& op : ops)
      if (op.kernel && (k >= ref.size() || ref[k++]->label != op.label)) return false;
    if (k != ref.size()) return false;
  }
  for (auto& ops : target.steady_ops) {
    size_t k = 0;
    for (OpRecord& op : ops)
      if (op.kernel) op.ranges = ref[k++]->ranges;
  }
  aggregate_layers(target, o);
  return target.has_layers;
}

DiffSide load_run(const std::string& path, const DiffOptions& o) {
  if (!std::ifstream(path)) throw TraceError("cannot open " + path + ": no such file, or not readable.");
  DiffSide r;
  if (looks_like_json(path)) {
    r = run_from_bench_json(path, o);
  } else {
    const Trace t = load_nsys_sqlite(path);
    const TraceJoin j(t);
    r = run_from_trace(j, o, path);
    if (!t.gpus.empty()) r.gpu = t.gpus[0].name;
  }
  // The bench writes its layer costs beside its --json and --trace files: the roofline columns.
  const std::string sidecar = layer_costs_path(path);
  if (std::ifstream(sidecar)) {
    try {
      r.costs = read_layer_costs(sidecar);
    } catch (const TraceError& e) {
      r.notes.push_back(std::string("no roofline columns: ") + e.what());
    }
  }
  return r;
}

// --- The comparison ----------------------------------------------------------------------

namespace {

double median_or_zero(const std::vector<double>& v) { return median_of(v); }

DiffRow compare(const std::string& name, const std::vector<double>& before, const std::vector<double>& after,
                const DiffOptions& o, uint64_t seed) {
  DiffRow row;
  row.name = name;
  row.before_ns = median_of(before);
  row.after_ns = median_of(after);
  row.change_ns = row.after_ns - row.before_ns;
  row.change_pct = row.before_ns > 0 ? 100 * row.change_ns / row.before_ns : 0;
  row.ci = bootstrap_median_change(before, after, o.resamples, seed);
  row.label = classify_change(row.before_ns, row.change_ns, row.ci, o);
  return row;
}

// A stable per-row seed, so a row's interval does not depend on which other rows exist.
uint64_t row_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return seed ^ h;
}

std::string calls_str(double c) { return std::fabs(c - std::round(c)) < 1e-9 ? format("%.0f", c) : format("%.2f", c); }

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
  for (const LayerCostEntry& e : costs.layers) {
    const bool match = row.whole ? e.parent.empty()
                                 : (o.by == LayerKey::Folded ? fold_block_indices(e.name) : e.name) == row.name;
    if (!match) continue;
    flops += e.flops;
    bytes += e.bytes();
    found = true;
  }
  if (!found || bytes <= 0) return std::nullopt;
  return roofline_point(flops, bytes, time_ns / 1e9, ceilings ? &*ceilings : nullptr, costs.precision);
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

Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o) {
  Diff d;
  d.options = o;
  DiffRow whole = compare("(iteration)", before.iteration_ns, after.iteration_ns, o, row_seed(o.seed, "(iteration)"));
  whole.whole = true;
  // Kernels and launches of the whole iteration, where both sides are traces.
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
    return median_of(v);
  };
  const bool counts = !before.steady_ops.empty() && !after.steady_ops.empty();
  if (counts) {
    whole.kernels_before = per_iteration(before, false);
    whole.kernels_after = per_iteration(after, false);
    whole.launches_before = per_iteration(before, true);
    whole.launches_after = per_iteration(after, true);
  }
  if (before.kind != after.kind)
    d.notes.push_back("The two sides measure an iteration differently (" + before.measure + " vs " + after.measure +
                      "): read the iteration row with care; layers need traces on both sides.");
  if (before.iteration_ns.size() < 10 || after.iteration_ns.size() < 10)
    d.notes.push_back(format("Few steady iterations (%zu before, %zu after): the intervals are wide; run more "
                             "iterations (bench --iters) for a sharper answer.",
                             before.iteration_ns.size(), after.iteration_ns.size()));
  bool told_layers = false;
  for (auto [target, from, what] : {std::tuple<DiffSide*, const DiffSide*, const char*>{&before, &after, "before"},
                                     {&after, &before, "after"}}) {
    if (target->kind != "trace" || from->kind != "trace" || target->has_layers || !from->has_layers) continue;
    told_layers = true;
    if (borrow_layers(*target, *from, o))
      d.notes.push_back(std::string("The ") + what + " side has no layer ranges (a CUDA Graph replay carries none): its "
                        "kernels run in the same order as the other side's, so each takes the layer of its "
                        "counterpart (" + std::to_string(target->steady_ops.front().size()) + " GPU operations per iteration).");
    else
      d.notes.push_back(std::string("The ") + what + " side has no layer ranges and its kernels do not run in the "
                        "other side's order: only the whole iteration is compared.");
  }
  if (before.has_layers && after.has_layers) {
    std::map<std::string, std::pair<const LayerRun*, const LayerRun*>> names;
    for (const LayerRun& l : before.layers) names[l.name].first = &l;
    for (const LayerRun& l : after.layers) names[l.name].second = &l;
    // Where each kernel lives on each side, to say where a disappeared kernel went.
    std::vector<DiffRow> rows;
    for (const auto& [name, pair] : names) {
      const auto [b, a] = pair;
      DiffRow row;
      if (b && a) {
        row = compare(name, b->time_ns, a->time_ns, o, row_seed(o.seed, name));
      } else {
        row.name = name;
        row.before_ns = b ? median_or_zero(b->time_ns) : 0;
        row.after_ns = a ? median_or_zero(a->time_ns) : 0;
        row.change_ns = row.after_ns - row.before_ns;
        row.change_pct = b ? -100 : 0;
        row.label = b ? Label::OnlyBefore : Label::OnlyAfter;
      }
      row.depth = (b ? b : a)->depth;
      if (b) {
        row.kernels_before = median_of(b->kernels);
        row.launches_before = median_of(b->launches);
      }
      if (a) {
        row.kernels_after = median_of(a->kernels);
        row.launches_after = median_of(a->launches);
      }
      describe_kernels(row, b, a);
      rows.push_back(std::move(row));
    }
    // Words for the kernels: where a gone kernel now lives, or that its layer lost a kernel
    // (fused into a neighbour, as a GELU moved into the GEMM's epilogue).
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
    std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
      return std::fabs(x.change_ns) > std::fabs(y.change_ns);
    });
    d.rows.push_back(whole);
    for (DiffRow& r : rows) d.rows.push_back(std::move(r));
  } else {
    d.rows.push_back(whole);
    if (!told_layers)
      d.notes.push_back("Layers are compared only when both sides are traces with NVTX layer ranges: this diff has "
                        "the whole iteration only.");
  }
  add_roofline(d, before, after, o);
  for (const DiffSide* r : {&before, &after})
    for (const std::string& n : r->notes) d.notes.push_back((r == &before ? "before: " : "after: ") + n);
  if (o.fail_if_slower_pct) {
    for (const DiffRow& r : d.rows)
      if (r.label == Label::Slower && r.change_pct > *o.fail_if_slower_pct) {
        d.gate_failed = true;
        d.gate_reasons.push_back(format("%s is %.1f%% slower (95%% CI %+.1f%% .. %+.1f%%), more than %g%%",
                                        r.name.c_str(), r.change_pct, 100 * r.ci.lo / r.before_ns,
                                        100 * r.ci.hi / r.before_ns, *o.fail_if_slower_pct));
      }
  }
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

// --- Text ----------------------------------------------------------------------------------

namespace {

std::string us(double ns) { return format("%.1f", ns / 1e3); }

std::string side_line(const DiffSide& r) {
  std::string s = r.file + " (" + r.kind + ": " + r.source + ")\n              " +
                  format("%zu steady iterations, warm-up %s; steady from iteration %zu (band %.3f ms ± %.3f ms)",
                         r.iteration_ns.size(), r.warmup_rule.c_str(), r.steady.start, r.steady.median / 1e6,
                         r.steady.band / 1e6);
  return s;
}

std::string counts_str(double b, double a, Label l) {
  if (l == Label::OnlyBefore) return calls_str(b) + " -> -";
  if (l == Label::OnlyAfter) return "- -> " + calls_str(a);
  return b == a ? calls_str(b) : calls_str(b) + " -> " + calls_str(a);
}

}  // namespace

void print_diff(const Diff& d, std::FILE* out) {
  const DiffOptions& o = d.options;
  std::fprintf(out, "  before      %s\n", side_line(d.before).c_str());
  std::fprintf(out, "  after       %s\n", side_line(d.after).c_str());
  std::fprintf(out, "  method      medians of the steady iterations; 95%% interval of the change by bootstrap (%d "
                    "resamples per row, seed %llu)\n",
               o.resamples, static_cast<unsigned long long>(o.seed));
  std::fprintf(out, "  labels      SLOWER/FASTER: interval clear of zero and change beyond ±%g%% and ±%g us; SAME: "
                    "interval within ±%g%% (or ±%g us); else UNCLEAR\n",
               o.threshold_pct, o.min_change_us, o.threshold_pct, o.min_change_us);
  std::fprintf(out, "  layers      %s; a layer's time is the GPU time of the work launched inside its range, nested "
                    "ranges included\n",
               o.by == LayerKey::Folded ? "NVTX names with block indices folded (h.*.attn)" : "NVTX names per block");
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
  for (const DiffRow& r : d.rows) {
    const bool both = r.label != Label::OnlyBefore && r.label != Label::OnlyAfter;
    const bool no_counts = r.whole && (d.before.steady_ops.empty() || d.after.steady_ops.empty());
    rows.push_back({r.name, r.label == Label::OnlyAfter ? "-" : us(r.before_ns),
                    r.label == Label::OnlyBefore ? "-" : us(r.after_ns), format("%+.1f", r.change_ns / 1e3),
                    both ? format("%+.1f%%", r.change_pct) : "",
                    both && r.before_ns > 0
                        ? format("%+.1f%% .. %+.1f%%", 100 * r.ci.lo / r.before_ns, 100 * r.ci.hi / r.before_ns)
                        : "",
                    label_name(r.label), no_counts ? "" : counts_str(r.kernels_before, r.kernels_after, r.label),
                    no_counts ? "" : counts_str(r.launches_before, r.launches_after, r.label)});
    if (roof) rows.back().push_back(roof_cell(r));
  }
  detail::print_table(out, rows, roof ? "lrrrrrllll" : "lrrrrrlll", 2);
  std::fprintf(out, "  (kernels, launches: per iteration, medians; a block-folded layer counts every block)\n");
  if (roof)
    std::fprintf(out, "  (%s: each side's median time against the FLOPs and bytes of its bench sidecar%s)\n",
                 d.ceilings ? "% of bound: achieved over the ceiling of the layer's bound (compute or memory)"
                            : "TFLOP/s: achieved",
                 d.ceilings ? (", ceilings " + d.ceilings->source).c_str() : "");

  bool any = false;
  for (const DiffRow& r : d.rows)
    if (!r.kernel_note.empty()) {
      if (!any) std::fprintf(out, "\nKernels that appeared or disappeared\n");
      any = true;
      std::fprintf(out, "  %s\n", r.name.c_str());
      print_wrapped(out, r.kernel_note, 4);
    }

  std::map<Label, size_t> count;
  for (const DiffRow& r : d.rows)
    if (!r.whole) ++count[r.label];
  const DiffRow& w = d.rows.front();
  std::fprintf(out, "\nVerdict: the iteration is %s (%+.1f%%, %.3f -> %.3f ms)", label_name(w.label), w.change_pct,
               w.before_ns / 1e6, w.after_ns / 1e6);
  if (count.empty()) {
    std::fprintf(out, ".\n");
  } else {
    std::string list;
    for (const auto& [l, n] : count) list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + label_name(l);
    std::fprintf(out, "; layers: %s.\n", list.c_str());
  }
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

// --- JSON ----------------------------------------------------------------------------------

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
                {"steady_state",
                 {{"start", r.steady.start},
                  {"median_ns", r.steady.median},
                  {"band_ns", r.steady.band},
                  {"outside_band_after_start", r.steady.outside_late},
                  {"warmup_too_short", r.steady.start > r.warmup}}},
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
  json rows = json::array();
  for (const DiffRow& r : d.rows) {
    auto kernels = [](const std::vector<std::pair<std::string, double>>& v) {
      json a = json::array();
      for (const auto& [k, c] : v) a.push_back({{"name", k}, {"per_iteration", c}});
      return a;
    };
    json x{{"name", r.name},
           {"whole_iteration", r.whole},
           {"depth", r.depth},
           {"label", label_name(r.label)},
           {"before_ns", r.before_ns},
           {"after_ns", r.after_ns},
           {"change_ns", r.change_ns},
           {"change_pct", r.change_pct}};
    if (r.label != Label::OnlyBefore && r.label != Label::OnlyAfter) {
      x["ci_ns"] = {r.ci.lo, r.ci.hi};
      if (r.before_ns > 0) x["ci_pct"] = {100 * r.ci.lo / r.before_ns, 100 * r.ci.hi / r.before_ns};
    }
    if (!r.whole || (!d.before.steady_ops.empty() && !d.after.steady_ops.empty())) {
      x["kernels"] = {{"before", r.kernels_before}, {"after", r.kernels_after}};
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
    if (r.roof_before || r.roof_after) x["roofline"] = {{"before", point(r.roof_before)}, {"after", point(r.roof_after)}};
    if (!r.whole) {
      x["kernels_gone"] = kernels(r.gone);
      x["kernels_new"] = kernels(r.added);
      x["kernel_note"] = r.kernel_note;
    }
    rows.push_back(x);
  }
  j["rows"] = rows;
  json gate = nullptr;
  if (o.fail_if_slower_pct)
    gate = {{"fail_if_slower_pct", *o.fail_if_slower_pct}, {"failed", d.gate_failed}, {"reasons", d.gate_reasons},
            {"exit_code", d.gate_failed ? 3 : 0}};
  j["gate"] = gate;
  return j;
}

// --- SVG -----------------------------------------------------------------------------------

namespace {

std::string n1(double v) { return format("%.1f", v); }

}  // namespace

void write_diff_svg(const Diff& d, const std::string& path) {
  constexpr double kW = 1600, kLeft = 150, kRight = 20, kRow = 16, kCharW = 6.0;
  constexpr int kMaxDepth = 3;  // layer rows drawn per side (deeper ones would crowd the picture)
  const Ns span = std::max(d.before.median_span, d.after.median_span);
  if (span <= 0 || (d.before.median_kernels.empty() && d.after.median_kernels.empty()))
    throw TraceError("cannot draw the diff: neither side is a trace with GPU work in a steady iteration (bench "
                     "reports hold laps only).");
  const double scale = (kW - kLeft - kRight) / double(span);
  auto x_of = [&](Ns t) { return kLeft + t * scale; };
  std::ostringstream s;
  double y = 40;
  std::map<std::string, std::pair<double, double>> top_before;  // top-level layer -> (x, y of its bottom edge)
  std::vector<std::string> lines;
  auto box = [&](double x0, double x1, double yy, double h, const std::string& fill, const std::string& tip,
                 const std::string& label) {
    const double w = std::max(x1 - x0, 0.6);
    s << "<g><title>" << xml_escape(tip) << "</title><rect x=\"" << n1(x0) << "\" y=\"" << n1(yy) << "\" width=\"" << n1(w)
      << "\" height=\"" << n1(h) << "\" fill=\"" << fill << "\" stroke=\"#fff\" stroke-width=\"0.3\"/>";
    const size_t fits = static_cast<size_t>((w - 4) / kCharW);
    if (!label.empty() && fits >= 3)
      s << "<text x=\"" << n1(x0 + 2) << "\" y=\"" << n1(yy + h - 4) << "\">"
        << xml_escape(label.size() <= fits ? label : label.substr(0, fits - 1) + "~") << "</text>";
    s << "</g>\n";
  };
  auto side = [&](const DiffSide& r, const char* title, bool first) {
    s << "<text x=\"8\" y=\"" << n1(y - 6) << "\" font-weight=\"bold\">" << xml_escape(std::string(title) + ": " + r.file)
      << format(" (median iteration %.3f ms)", r.median_span / 1e6) << "</text>\n";
    int depth = 1;
    for (const DiffBox& b : r.median_layers) depth = std::max(depth, std::min(b.depth, kMaxDepth));
    for (int level = 1; level <= depth; ++level) {
      s << "<text x=\"8\" y=\"" << n1(y + kRow - 4) << "\" fill=\"#555\">layers, level " << level << "</text>\n";
      for (const DiffBox& b : r.median_layers) {
        if (b.depth != level) continue;
        box(x_of(b.start), x_of(b.end), y, kRow - 2, level % 2 ? "#d9d9d9" : "#eeeeee",
            b.name + format(": %.1f us on the GPU", (b.end - b.start) / 1e3), b.name);
        if (level == 1) {
          if (first) {
            top_before[b.name] = {x_of(b.start), y};
          } else if (auto it = top_before.find(b.name); it != top_before.end()) {
            lines.push_back("<line x1=\"" + n1(it->second.first) + "\" y1=\"" + n1(it->second.second) + "\" x2=\"" +
                            n1(x_of(b.start)) + "\" y2=\"" + n1(y) + "\" stroke=\"#888\" stroke-width=\"0.6\" "
                            "stroke-dasharray=\"3,2\"/>");
          }
        }
      }
      y += kRow;
    }
    s << "<text x=\"8\" y=\"" << n1(y + kRow - 4) << "\" fill=\"#555\">kernels</text>\n";
    for (const DiffBox& k : r.median_kernels)
      box(x_of(k.start), x_of(k.end), y, kRow, category_color(k.category),
          k.name + format(" (%s): %.1f us", category_name(k.category), (k.end - k.start) / 1e3), "");
    y += kRow;
    if (first) {
      // Remember the bottom of the before side's first layer row: the joining lines start there.
      for (auto& [name, xy] : top_before) xy.second += kRow - 2;
    }
  };
  side(d.before, "before", true);
  y += 60;  // room for the joining lines
  side(d.after, "after", false);
  // Time axis.
  y += 10;
  const double raw = span / 1e6 / 10, p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  s << "<line x1=\"" << n1(kLeft) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(kW - kRight) << "\" y2=\"" << n1(y)
    << "\" stroke=\"#333\"/>\n";
  for (double t = 0; t <= span / 1e6 + 1e-9; t += step) {
    const double x = x_of(static_cast<Ns>(t * 1e6));
    s << "<line x1=\"" << n1(x) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(x) << "\" y2=\"" << n1(y + 4)
      << "\" stroke=\"#333\"/><text x=\"" << n1(x) << "\" y=\"" << n1(y + 16) << "\" text-anchor=\"middle\">"
      << format("%g ms", t) << "</text>\n";
  }
  y += 30;
  // Legend.
  double lx = kLeft;
  for (int c = 0; c < kCategoryCount; ++c) {
    const Category cat = static_cast<Category>(c);
    s << "<rect x=\"" << n1(lx) << "\" y=\"" << n1(y) << "\" width=\"12\" height=\"12\" fill=\"" << category_color(cat)
      << "\"/><text x=\"" << n1(lx + 16) << "\" y=\"" << n1(y + 10) << "\">" << category_name(cat) << "</text>\n";
    lx += 30 + kCharW * std::string(category_name(cat)).size();
  }
  y += 24;
  std::ofstream f(path);
  if (!f) throw TraceError("cannot write the SVG diff to " + path + ".");
  f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << n1(kW) << "\" height=\"" << n1(y)
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << s.str();
  for (const std::string& l : lines) f << l << "\n";
  f << "</svg>\n";
}

}  // namespace laptime::trace
