#include "trace/compare/diff_input.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/iterations.h"
#include "trace/analyses/kernel_mix.h"
#include "trace/analyses/processes.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
#include "trace/read/sidecars.h"

namespace laptime::trace {

namespace {

// The iterations the analysis measures: one place to follow analyze's steady-state rule.
bool measured(const Iteration& it) { return it.steady(); }

void finish_series(DiffSide& r, const std::string& what) {
  r.settling = stats::settling(r.series_ns);
  const std::string w = warmup_warning(r.settling, r.warmup, what);
  if (!w.empty()) r.notes.push_back(w);
  const std::string shifts = level_shift_note(
      r.settling, [](size_t i) { return uint64_t{i}; }, what);
  if (!shifts.empty()) r.notes.push_back(shifts);
}

// A `laptime bench --json` report (or torch_baseline.py's, same schema): per-iteration laps.
// A scalar of a report as text for the identity ("12.4", "90100"); "" for null or a structure.
std::string scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}

// What a bench report says ran: its config, and the software its device block names.
RunIdentity identity_of_report(const nlohmann::json& j) {
  RunIdentity id;
  const nlohmann::json cfg = j.value("config", nlohmann::json::object());
  if (cfg.is_object()) {
    for (auto [field, key] : {std::pair<std::string*, const char*>{&id.model, "model"},
                              {&id.precision, "precision"},
                              {&id.shape, "shape"},
                              {&id.mode, "mode"}})
      if (cfg.contains(key)) *field = scalar_text(cfg[key]);
    if (cfg.contains("switches") && cfg["switches"].is_object()) {
      id.switches.emplace();
      for (const auto& [name, value] : cfg["switches"].items()) (*id.switches)[name] = scalar_text(value);
    }
  }
  id.software["framework"] = j.contains("framework") ? scalar_text(j["framework"]) : "laptime";
  if (j.contains("device") && j["device"].is_object()) {
    const nlohmann::json& d = j["device"];
    for (auto [key, name] : {std::pair<const char*, const char*>{"driver", "driver"},
                             {"cuda_runtime", "CUDA runtime"},
                             {"cublas_loaded", "cuBLAS"},
                             {"cudnn_loaded", "cuDNN"},
                             {"torch", "torch"}})
      if (d.contains(key) && !scalar_text(d[key]).empty()) id.software[name] = scalar_text(d[key]);
  }
  return id;
}

// A bench report holds a few KB per thousand laps: 1,000,000 laps (the bench's --iters limit)
// stay far below this.
constexpr size_t kMaxReportBytes = size_t{1} << 30;

// The report's `energy` (bench/energy.h's JSON): its blocks when it measured them, with the
// laps inside each; a malformed one is no energy and says so, not a refused report (the laps
// are what a diff compares first).
void read_energy(const nlohmann::json& j, DiffSide& r) {
  if (!j.contains("energy")) return;
  const nlohmann::json& e = j["energy"];
  if (!e.is_object() || !e.contains("available") || !e["available"].is_boolean()) {
    r.no_energy = "its energy member is malformed";
    return;
  }
  if (!e["available"].get<bool>()) {
    r.no_energy = e.contains("reason") && e["reason"].is_string() ? e["reason"].get<std::string>() : "it says none";
    return;
  }
  EnergyBlocks b;
  const auto finite = [](const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()); };
  if (e.contains("blocks") && e["blocks"].is_array())
    for (const nlohmann::json& x : e["blocks"]) {
      if (!x.is_object() || !x.contains("joules") || !x.contains("laps") || !finite(x["joules"]) ||
          !finite(x["laps"]) || x["joules"].get<double>() < 0 || x["laps"].get<double>() < 0) {
        r.no_energy = "an energy block of it has no joules and laps as numbers of 0 or more";
        return;
      }
      b.joules.push_back(x["joules"].get<double>());
      b.laps.push_back(x["laps"].get<double>());
    }
  double laps = 0;
  for (double l : b.laps) laps += l;
  if (!(laps > 0)) {
    r.no_energy = "its energy has no block with laps in it";
    return;
  }
  r.energy = std::move(b);
}

DiffSide run_from_bench_json(const std::string& path, const DiffOptions& o) {
  using nlohmann::json;
  json j;
  std::string text;
  try {
    text = read_input(path, "a bench report", kMaxReportBytes);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  try {
    j = parse_untrusted_json(text, path);
  } catch (const json::exception&) {
    throw TraceError(path +
                     " is not valid JSON: expected a trace (nsys SQLite export) or a `laptime bench --json` report.");
  }
  if (!j.is_object() || j.value("schema", "") != "laptime.bench/1" || !j.contains("iterations") ||
      !j["iterations"].is_array())
    throw TraceError(path +
                     " is JSON but not a `laptime bench --json` report (schema laptime.bench/1 with "
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
      // A lap is a time: a negative or zero one (a hand-edited or broken report) would compare
      // as "FASTER -200%".
      const double ms = it["lap_ms"].get<double>();
      if (!(ms > 0) || !std::isfinite(ms * 1e6))
        throw TraceError(path + " has lap_ms " + it["lap_ms"].dump() + " at iteration " +
                         std::to_string(r.series_ns.size()) + ": a lap is a positive number of milliseconds.");
      r.series_ns.push_back(ms * 1e6);
      warm.push_back(it.value("warmup", false));
    }
    r.identity = identity_of_report(j);
    read_energy(j, r);
    // The switches the run had, beside where its numbers came from: "..., LAPTIME_CUTLASS_PDL=on".
    if (r.identity.switches)
      for (const auto& [name, value] : *r.identity.switches) r.source += ", " + name + "=" + value;
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

DiffSide run_from_trace(const TraceJoin& j, const DiffOptions& o, const std::string& file,
                        std::optional<uint32_t> pid) {
  const Trace& t = j.trace();
  ReportOptions ro;
  ro.range = o.range;
  ro.skip_warmup = o.skip_warmup;
  ro.pid = pid;
  ro.scope = AnalysisScope::Iterations;
  // One process per side: two loops read as one would interleave their iterations.
  const ProcessChoice procs = choose_processes(j, o.range, pid);
  if (procs.reported.size() > 1)
    throw TraceError(
        file + " holds " + std::to_string(procs.reported.size()) + " processes with iterations (" +
        process_list(t, procs.reported, 6) +
        "): a diff compares one process on each side; name it with --pid N (both sides) or --pid-before N / "
        "--pid-after N.");
  Analysis a = analyze(j, ro, procs.reported.empty() ? find_iterations(j, o.range) : procs.reported.front().set);
  a.notes.insert(a.notes.end(), procs.notes.begin(), procs.notes.end());

  DiffSide r;
  r.names = t.names;
  r.file = file;
  r.kind = "trace";
  r.source = a.source + (a.gpu.empty() ? "" : ", " + a.gpu) + (pid ? ", process " + process_label(t, *pid) : "");
  r.measure = "GPU span of the `" + a.range_name + "` range (first start to last end of its GPU work)";
  r.warmup_rule = a.warmup_rule;
  r.notes = a.notes;

  // Iterations: their order, the steady ones, and which NVTX range is which.
  std::vector<int> iteration_of_nvtx(t.nvtx.size(), -1);  // nvtx index -> index into a.iterations
  std::vector<int> steady_slot(a.iterations.size(), -1);  // a.iterations index -> steady index
  size_t steady = 0;
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    const Iteration& it = a.iterations[i];
    iteration_of_nvtx[static_cast<size_t>(it.nvtx)] = static_cast<int>(i);
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
  const IterationSettling st = iteration_settling(a);
  r.settling = st.settling;
  r.warmup = st.warmup;
  if (!st.warning.empty()) r.notes.push_back(warmup_warning(st.settling, st.warmup, file));
  for (const Iteration& it : a.iterations) r.numbers.push_back(it.index);
  if (!st.shifts.empty())
    r.notes.push_back(level_shift_note(
        st.settling, [&r](size_t i) { return r.number_of(i); }, file));

  // Every op of a steady iteration, with the ranges of its launch's chain below the
  // iteration range (the layers it counts for).
  const int median_it = a.svg_iteration;
  r.steady_ops.resize(steady);
  const auto is_iteration = [&](int rr) { return iteration_of_nvtx[static_cast<size_t>(rr)] >= 0; };
  for (const GpuOp& op : j.ops()) {
    int iteration = -1;  // the iteration of its launch
    for (int rr = op.range; rr >= 0 && iteration < 0; rr = t.nvtx[rr].parent)
      iteration = iteration_of_nvtx[static_cast<size_t>(rr)];
    if (iteration < 0 || steady_slot[iteration] < 0) continue;
    // Its layers: below the iteration range, innermost first; for a graph node's work, the ranges
    // it was captured in (trace/analyses/graph.h).
    const std::vector<int> chain = j.layer_chain(op, is_iteration);
    const Iteration& it = a.iterations[iteration];
    OpRecord rec;
    rec.start = op.start - it.gpu_start;
    rec.end = op.end - it.gpu_start;
    rec.label = op.label;
    rec.kernel = op.kind == GpuOp::Kind::Kernel;
    r.graph_replays = r.graph_replays || op.kind == GpuOp::Kind::GraphReplay;
    r.graph_work = r.graph_work || op.in_graph;
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
  if (r.graph_replays)
    r.notes.push_back(file +
                      " replays CUDA Graphs that the trace holds whole (nsys's default graph trace): what ran "
                      "inside them is not known, so they have no layers and no kernel count; capture with `nsys "
                      "profile --cuda-graph-trace=node` to compare them layer by layer.");
  else if (!r.has_layers)
    r.notes.push_back(file +
                      " has no NVTX ranges inside its iterations (or its kernels run from a CUDA Graph "
                      "launched outside them).");
  return r;
}

namespace {

// The layers of a side while they are filled: one per folded name, its series grown one entry
// per steady iteration it runs in; the kernel calls of every layer in one table.
class LayerTable {
 public:
  LayerTable(const DiffOptions& o, size_t steady) : by_(o.by), steady_(steady) {}

  // The layer a range of an op stands for (its name folded once per distinct range name).
  int of_range(const Name& range, int depth) {
    auto [it, fresh] = by_range_.try_emplace(range.key(), -1);
    if (fresh) it->second = of_name(by_ == LayerKey::Folded ? fold_block_indices(range) : range.str(), depth);
    return it->second;
  }
  int of_name(const std::string& name, int depth) {
    auto [it, fresh] = by_name_.try_emplace(name, static_cast<int>(layers_.size()));
    if (fresh) {
      LayerRun& l = layers_.emplace_back();
      l.name = name;
      l.depth = depth;
      l.iterations = steady_;
      last_op_.push_back(UINT64_MAX);
    }
    return it->second;
  }
  // Whether op number `op` is new to layer l (a folded name counts once per op).
  bool first_for_op(int l, uint64_t op) {
    if (last_op_[static_cast<size_t>(l)] == op) return false;
    last_op_[static_cast<size_t>(l)] = op;
    return true;
  }
  // Adds an op of steady iteration s to layer l.
  void add(int l, uint32_t s, const OpRecord& op) {
    LayerRun& run = layers_[static_cast<size_t>(l)];
    if (run.ran.empty() || run.ran.back().iteration != s) run.ran.push_back({s, 0, 0, 0});
    run.ran.back().time_ns += double(op.end - op.start);
    if (op.kernel) {
      run.ran.back().kernels += 1;
      auto [it, fresh] = calls_.try_emplace({l, op.label.key()}, op.label, 0.0);
      it->second.second += 1;
    }
  }
  void add_launch(int l) { layers_[static_cast<size_t>(l)].ran.back().launches += 1; }

  // The layers by name, their kernel calls per steady iteration.
  std::vector<LayerRun> take() {
    for (const auto& [key, call] : calls_)
      layers_[static_cast<size_t>(key.first)].kernel_calls[call.first] += call.second;
    for (LayerRun& l : layers_)
      for (auto& [k, calls] : l.kernel_calls) calls /= double(steady_);
    std::sort(layers_.begin(), layers_.end(), [](const LayerRun& x, const LayerRun& y) { return x.name < y.name; });
    return std::move(layers_);
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<int, const void*>& p) const {
      return std::hash<const void*>()(p.second) * 31 + std::hash<int>()(p.first);
    }
  };
  LayerKey by_;
  size_t steady_;
  std::vector<LayerRun> layers_;
  std::vector<uint64_t> last_op_;                  // per layer: the last op added
  std::unordered_map<const void*, int> by_range_;  // range name (Name::key) -> layer
  std::unordered_map<std::string, int> by_name_;   // folded name -> layer
  std::unordered_map<std::pair<int, const void*>, std::pair<Name, double>, PairHash>
      calls_;  // (layer, kernel) -> calls
};

}  // namespace

void aggregate_layers(DiffSide& r, const DiffOptions& o) {
  const size_t steady = r.steady_ops.size();
  LayerTable table(o, steady);
  bool any_layer = false;
  uint64_t op_number = 0;
  std::vector<int> layers;                    // of one op: each folded name once
  std::vector<std::pair<int, int>> launches;  // of one iteration: (layer, API call)
  for (size_t s = 0; s < steady; ++s) {
    launches.clear();
    for (const OpRecord& op : r.steady_ops[s]) {
      ++op_number;
      layers.clear();
      for (size_t c = 0; c < op.ranges.size(); ++c) {
        const int l = table.of_range(op.ranges[c], static_cast<int>(c + 1));
        if (table.first_for_op(l, op_number)) layers.push_back(l);
      }
      if (layers.empty())
        layers.push_back(table.of_name("(outside layers)", 1));
      else
        any_layer = true;
      for (int l : layers) {
        table.add(l, static_cast<uint32_t>(s), op);
        if (op.api >= 0) launches.emplace_back(l, op.api);
      }
    }
    // Distinct host calls per layer in this iteration.
    std::sort(launches.begin(), launches.end());
    launches.erase(std::unique(launches.begin(), launches.end()), launches.end());
    for (const auto& [l, api] : launches) table.add_launch(l);
  }
  r.has_layers = any_layer;
  r.layers.clear();
  if (any_layer) r.layers = table.take();
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
      const std::pair<int, std::string> key{static_cast<int>(c + 1), op.ranges[c].str()};
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

bool check_layer_costs_beside(const std::string& path) {
  try {
    return check_input(layer_costs_path(path), "a layer costs file", Missing::Allow);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
}

DiffSide load_run(const std::string& path, const DiffOptions& o, std::optional<uint32_t> pid) {
  // A FIFO would block the reads below forever, a folder or a device is no run of ours.
  try {
    if (!check_input(path, "a trace or a bench report", Missing::Allow))
      throw TraceError("cannot open " + path + ": no such file, or not readable.");
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  DiffSide r;
  try {
    if (const TraceKind kind = trace_kind(path); kind == TraceKind::BenchReport || kind == TraceKind::OtherJson) {
      if (pid)
        throw TraceError(path +
                         " is a bench report, one process's laps: --pid names a process of a trace (--pid-before N "
                         "or --pid-after N for the trace's side alone).");
      r = run_from_bench_json(path, o);
    } else {
      const Trace t = load_trace(path);
      const TraceJoin j(t);
      r = run_from_trace(j, o, path, pid);
      if (!t.gpus.empty()) r.gpu = t.gpus[0].name;
    }
  } catch (const TraceError& e) {
    // Two inputs: a sentence that does not say which one (a damaged file's "database disk
    // image is malformed", an analysis that finds no iterations) gets the file's name.
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    throw TraceError(path + ": " + what);
  }
  // The bench writes its layer costs beside its --json and --trace files: the roofline columns.
  const std::string sidecar = layer_costs_path(path);
  if (check_layer_costs_beside(path)) {
    try {
      r.costs = read_layer_costs(sidecar);
    } catch (const TraceError& e) {
      r.notes.push_back(std::string("no roofline columns: ") + e.what());
    }
  }
  // A trace says which GPU; the sidecar what ran on it, where a bench report does not say.
  if (r.costs) {
    if (r.identity.model.empty()) r.identity.model = r.costs->model;
    if (r.identity.precision.empty()) r.identity.precision = r.costs->precision;
    if (r.identity.shape.empty()) r.identity.shape = r.costs->shape;
  }
  return r;
}

}  // namespace laptime::trace
