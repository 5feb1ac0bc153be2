#include "trace/analyses/roofline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "trace/model/error.h"
#include "trace/write/roofline_svg.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

// A layer costs or peak file is a few hundred KB at most; a FIFO, a folder or a device is
// refused before it is opened (core/input_file.h), a file past the bound before it is read.
constexpr size_t kMaxSidecarBytes = 64u << 20;

nlohmann::json read_json(const std::string& path, const char* what) {
  std::string text;
  try {
    text = read_input(path, "a " + std::string(what) + " file", kMaxSidecarBytes);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw TraceError(path + " is not a JSON " + what + " file.");
  }
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// `h.3.attn.c_attn` -> `h.*.attn.c_attn`, `layer2.1.conv1` -> `layer2.*.conv1`: every
// dot-separated part made only of digits becomes `*` (the block index).
std::string fold_indices(const std::string& name) {
  std::string out, part;
  std::stringstream ss(name);
  bool first = true;
  while (std::getline(ss, part, '.')) {
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    out += (first ? "" : ".") + (digits ? std::string("*") : part);
    first = false;
  }
  return out;
}

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

// --- The sidecar ------------------------------------------------------------------------

std::string layer_costs_path(const std::string& report_or_trace) {
  const size_t slash = report_or_trace.find_last_of('/'), dot = report_or_trace.find_last_of('.');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;  // a leading dot is no extension
  const bool has_ext = dot != std::string::npos && dot > base;
  return (has_ext ? report_or_trace.substr(0, dot) : report_or_trace) + ".layers.json";
}

LayerCosts layer_costs_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string bad = source + " is not a laptime layer costs file (schema laptime.layers/1)";
  if (!j.is_object() || j.value("schema", "") != "laptime.layers/1" || !j.contains("layers") || !j["layers"].is_array())
    throw TraceError(bad + ".");
  LayerCosts c;
  c.source = source;
  try {
    c.model = j.at("model").get<std::string>();
    c.precision = j.at("precision").get<std::string>();
    c.shape = j.value("shape", "");
    for (const auto& l : j["layers"]) {
      LayerCostEntry e;
      e.name = l.at("name").get<std::string>();
      e.parent = l.value("parent", "");
      e.kind = l.value("kind", "");
      e.precision = l.value("precision", "");
      e.flops = l.at("flops").get<double>();
      e.weight_bytes = l.at("bytes").at("weights").get<double>();
      e.input_bytes = l.at("bytes").at("inputs").get<double>();
      e.output_bytes = l.at("bytes").at("outputs").get<double>();
      if (!(e.flops >= 0 && e.weight_bytes >= 0 && e.input_bytes >= 0 && e.output_bytes >= 0))
        throw TraceError(bad + ": layer " + e.name + " has a negative count.");
      c.layers.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception&) {
    throw TraceError(bad + ": a field is missing or of the wrong type.");
  }
  return c;
}

LayerCosts read_layer_costs(const std::string& path) { return layer_costs_from_json(read_json(path, "layer costs"), path); }

// --- The ceilings -----------------------------------------------------------------------

double Ceilings::tflops(const std::string& precision) const {
  if (precision == "bf16" || precision == "fp16") return bf16_tflops;
  if (precision == "tf32") return tf32_tflops;
  if (precision == "fp32") return fp32_tflops;
  if (precision == "fp8") {
    if (fp8_tflops > 0) return fp8_tflops;
    throw TraceError("the ceilings in " + source + " have no fp8 rate (measured before fp8 existed): run `laptime peak --force`.");
  }
  throw TraceError("no compute ceiling for precision '" + precision + "': expected bf16, tf32, fp32 or fp8.");
}

std::string default_peak_path(const std::string& gpu_name) {
  std::string dir;
  if (const char* d = std::getenv("LAPTIME_CACHE_DIR"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/laptime";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/laptime";
  else dir = ".";
  std::string key;
  for (char c : gpu_name) key += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return dir + "/peak-" + (key.empty() ? "unknown" : key) + ".json";
}

nlohmann::json ceilings_to_json(const Ceilings& c) {
  nlohmann::json j{{"schema", "laptime.peak/1"},
                   {"gpu", {{"name", c.gpu}, {"uuid", c.uuid}}},
                   {"tflops", {{"bf16", c.bf16_tflops}, {"tf32", c.tf32_tflops}, {"fp32", c.fp32_tflops}}},
                   {"copy_gbps", c.copy_gbps},
                   {"measured", c.measured}};
  if (c.fp8_tflops > 0) j["tflops"]["fp8"] = c.fp8_tflops;  // older files have none
  return j;
}

Ceilings ceilings_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string bad = source + " is not a laptime peak file (schema laptime.peak/1, from `laptime peak`)";
  if (!j.is_object() || j.value("schema", "") != "laptime.peak/1") throw TraceError(bad + ".");
  Ceilings c;
  c.source = source;
  try {
    c.gpu = j.at("gpu").at("name").get<std::string>();
    c.uuid = j.at("gpu").value("uuid", "");
    c.bf16_tflops = j.at("tflops").at("bf16").get<double>();
    c.tf32_tflops = j.at("tflops").at("tf32").get<double>();
    c.fp32_tflops = j.at("tflops").at("fp32").get<double>();
    c.fp8_tflops = j.at("tflops").value("fp8", 0.0);
    c.copy_gbps = j.at("copy_gbps").get<double>();
    c.measured = j.value("measured", "");
  } catch (const nlohmann::json::exception&) {
    throw TraceError(bad + ": a field is missing or of the wrong type.");
  }
  for (double v : {c.bf16_tflops, c.tf32_tflops, c.fp32_tflops, c.copy_gbps})
    if (!(v > 0 && std::isfinite(v))) throw TraceError(bad + ": every ceiling must be a positive number.");
  if (j.at("tflops").contains("fp8") && !(c.fp8_tflops > 0 && std::isfinite(c.fp8_tflops)))
    throw TraceError(bad + ": every ceiling must be a positive number.");
  return c;
}

Ceilings read_ceilings(const std::string& path) { return ceilings_from_json(read_json(path, "peak"), path); }

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
    RooflineRow row{e.name, e.kind, 1, e.flops, e.bytes(), total_ns[i] / n_steady, {},
                    costs.precision_of(e)};
    row.point = roofline_point(row.flops, row.bytes, row.time_ns * 1e-9, ceilings ? &*ceilings : nullptr, row.precision);
    r.layers.push_back(std::move(row));
  }
  if (r.layers.empty())
    throw TraceError("no range in the steady iterations of this trace is named like a layer of " + costs.source +
                     " (" + costs.model + "): capture with `--nvtx layer` (or block); a --graph run under nsys needs "
                     "`--cuda-graph-trace=node`.");
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 6; ++i) list += (i ? ", " : "") + missing[i];
    r.notes.push_back(std::to_string(missing.size()) + " of " + std::to_string(costs.layers.size()) +
                      " layers of the sidecar have no GPU work under a range of their name (a coarser --nvtx level, "
                      "or fused into a neighbour): " + list + (missing.size() > 6 ? ", ..." : "") + ".");
  }

  // Folded: one row per block-index pattern and identical cost.
  std::map<std::tuple<std::string, double, double>, size_t> group;
  std::vector<std::vector<const RooflineRow*>> members;
  for (const RooflineRow& row : r.layers) {
    const auto key = std::make_tuple(fold_indices(row.name) + " " + row.precision, row.flops, row.bytes);
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
    f.name = fold_indices(f.name);
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
    r.notes.push_back(other + " compute in another precision than the run's: their bound is that precision's "
                      "ceiling.");
  return r;
}

std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const std::string& trace_file,
                                           const std::string& layers_file, const std::string& peak_file) {
  // Whether something is there, without opening it: opening a FIFO blocks.
  auto exists = [](const std::string& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
  };
  std::string layers = layers_file.empty() ? layer_costs_path(trace_file) : layers_file;
  if (layers_file.empty() && !exists(layers)) return std::nullopt;
  const LayerCosts costs = read_layer_costs(layers);
  std::optional<Ceilings> ceilings;
  std::string cache_note;
  if (!peak_file.empty()) {
    ceilings = read_ceilings(peak_file);
  } else {
    const std::vector<Gpu>& gpus = j.trace().gpus;
    uint32_t device = j.ops().empty() ? 0 : j.ops().front().device;
    const auto g = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& x) { return x.id == device; });
    const std::string name = g != gpus.end() ? g->name : gpus.empty() ? "" : gpus.front().name;
    if (!name.empty() && exists(default_peak_path(name))) {
      try {
        ceilings = read_ceilings(default_peak_path(name));
      } catch (const TraceError& e) {  // a damaged cache: achieved rates only, and say why
        cache_note = std::string(e.what()) + " Run `laptime peak --force` to measure again.";
      }
    }
  }
  Roofline r;
  try {
    r = compute_roofline(j, a, costs, ceilings);
  } catch (const TraceError& e) {
    if (!layers_file.empty()) throw;  // asked for by name: an error
    r.costs = costs;  // found beside the trace (a --graph run has one too): a note, not an error
    r.ceilings = ceilings;
    r.notes.push_back(e.what());
    return r;
  }
  if (!cache_note.empty()) r.notes.push_back(cache_note);
  if (ceilings && !j.trace().gpus.empty()) {
    bool same = false;
    for (const Gpu& g : j.trace().gpus) same |= g.name == ceilings->gpu;
    if (!same)
      r.notes.push_back("the ceilings were measured on " + ceilings->gpu + ", the trace ran on " +
                        j.trace().gpus.front().name + ".");
  }
  return r;
}

void print_roofline(const Roofline& r, std::FILE* out) {
  std::fprintf(out, "\nRoofline per layer (%s, %s %s %s)\n", r.costs.source.c_str(), r.costs.model.c_str(),
               r.costs.precision.c_str(), r.costs.shape.c_str());
  if (r.layers.empty()) {
    for (const std::string& n : r.notes) std::fprintf(out, "  none      %s\n", n.c_str());
    return;
  }
  if (r.ceilings)
    std::fprintf(out, "  ceilings  %s: %s GEMM %.1f TFLOP/s, device copy %.0f GB/s, ridge %.1f FLOP/byte (%s%s%s)\n",
                 r.ceilings->gpu.c_str(), r.costs.precision.c_str(), r.peak_tflops, r.peak_gbps, r.ridge,
                 r.ceilings->source.c_str(), r.ceilings->measured.empty() ? "" : ", ",
                 r.ceilings->measured.c_str());
  else
    std::fprintf(out, "  ceilings  none: run `laptime peak` on this GPU, or pass --peak FILE (achieved rates only)\n");
  std::fprintf(out, "  time      GPU time of the kernels launched inside each range, per steady iteration (mean)\n");
  for (const std::string& n : r.notes) std::fprintf(out, "  note      %s\n", n.c_str());
  std::fprintf(out, "\n  %-22s %4s %9s %9s %8s %10s %8s %8s %-8s %7s\n", "layer", "x", "GFLOP", "MB", "FLOP/B",
               "time (us)", "TFLOP/s", "GB/s", "bound", "% bound");
  for (const RooflineRow& row : r.folded) {
    const RooflinePoint& p = row.point;
    std::fprintf(out, "  %-22s %4zu %9.3f %9.2f %8.1f %10.1f %8.1f %8.0f %-8s %7s\n", row.name.c_str(), row.instances,
                 row.flops / 1e9, row.bytes / 1e6, p.intensity, row.time_ns / 1e3, p.tflops, p.gbps,
                 p.has_bound ? roof_bound_name(p.bound) : "-", p.has_bound ? fmt("%.1f", p.pct_of_bound).c_str() : "-");
  }
}

namespace {
nlohmann::json row_json(const RooflineRow& row) {
  const RooflinePoint& p = row.point;
  nlohmann::json j{{"name", row.name},          {"kind", row.kind},           {"instances", row.instances},
                   {"flops", row.flops},        {"bytes", row.bytes},         {"time_ns", row.time_ns},
                   {"intensity", p.intensity},  {"tflops", p.tflops},         {"gbps", p.gbps},
                   {"precision", row.precision}};
  if (p.has_bound) {
    j["bound"] = roof_bound_name(p.bound);
    j["attainable_tflops"] = p.attainable_tflops;
    j["pct_of_bound"] = p.pct_of_bound;
  }
  return j;
}
}  // namespace

nlohmann::json roofline_to_json(const Roofline& r) {
  nlohmann::json j{{"layer_costs", r.costs.source},
                   {"model", r.costs.model},
                   {"precision", r.costs.precision},
                   {"shape", r.costs.shape},
                   {"time", "GPU time of the kernels launched inside each range, per steady iteration (mean)"},
                   {"notes", r.notes},
                   {"layers", nlohmann::json::array()},
                   {"folded", nlohmann::json::array()}};
  if (r.ceilings) {
    j["ceilings"] = ceilings_to_json(*r.ceilings);
    j["ceilings"]["source"] = r.ceilings->source;
    j["peak_tflops"] = r.peak_tflops;
    j["peak_gbps"] = r.peak_gbps;
    j["ridge_flop_per_byte"] = r.ridge;
  }
  for (const RooflineRow& row : r.layers) j["layers"].push_back(row_json(row));
  for (const RooflineRow& row : r.folded) j["folded"].push_back(row_json(row));
  return j;
}

void write_roofline_svg(const Roofline& r, const std::string& path) {
  if (r.layers.empty()) throw TraceError("no layer to draw in the roofline plot: " + r.notes.front());
  if (!r.ceilings) throw TraceError("the roofline plot needs the device's ceilings: run `laptime peak`, or pass --peak FILE.");
  const double peak = r.peak_tflops, bw = r.peak_gbps, ridge = r.ridge;
  RoofPlot plot;
  plot.title = "Roofline per layer: " + r.costs.model + " " + r.costs.precision + " " + r.costs.shape + " on " +
               r.ceilings->gpu;
  plot.subtitle = r.costs.precision + " GEMM " + fmt("%.1f", peak) + " TFLOP/s, device copy " + fmt("%.0f", bw) +
                  " GB/s, ridge " + fmt("%.1f", ridge) + " FLOP/byte (laptime peak); time per layer: mean over steady "
                  "iterations";
  plot.roof_label = r.costs.precision + " " + fmt("%.0f", peak) + " TFLOP/s";
  plot.peak_tflops = peak;
  plot.copy_gbps = bw;
  plot.ridge = ridge;
  plot.listed_heading = "Not drawn, 0 FLOPs counted (memory-bound; % of the copy bandwidth):";
  for (const RooflineRow& row : r.folded) {
    const RooflinePoint& p = row.point;
    const std::string times = row.instances > 1 ? " x" + std::to_string(row.instances) : "";
    if (!(row.flops > 0 && row.time_ns > 0)) {
      plot.listed.push_back(row.name + times + ": " + fmt("%.0f", p.gbps) + " GB/s, " + fmt("%.1f", p.pct_of_bound) + "%");
      continue;
    }
    RoofPlotPoint q;
    q.label = row.name + times + " " + fmt("%.0f%%", p.pct_of_bound);
    q.tooltip = row.name + ": " + fmt("%.1f", p.intensity) + " FLOP/B, " + fmt("%.1f", p.tflops) + " TFLOP/s, " +
                fmt("%.0f", p.gbps) + " GB/s, " + roof_bound_name(p.bound) + "-bound, " + fmt("%.1f", p.pct_of_bound) +
                "% of the bound";
    q.intensity = p.intensity;
    q.tflops = p.tflops;
    q.compute = p.bound == RoofBound::Compute;
    plot.points.push_back(std::move(q));
  }
  // A temporary beside the target, renamed when complete; every write checked (core/output_file.h).
  write_output(path, "roofline SVG", roofline_plot_svg(plot));
}

}  // namespace laptime::trace
