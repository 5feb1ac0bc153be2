// The per-layer roofline: how far each layer of a traced run is from the limit that applies.
//
// Inputs, all optional for `laptime analyze` and read as plain JSON (trace/ knows nothing of
// the models):
//   - the layer costs sidecar (schema laptime.layers/1) the bench writes beside its --json
//     and --trace files: every NVTX range's FLOPs and bytes for the shapes built;
//   - the device's ceilings (schema laptime.peak/1) measured by `laptime peak`: a GEMM per
//     precision (TFLOP/s) and a device-to-device copy (GB/s), cached per GPU name.
// Per layer: its GPU time per steady iteration (the kernels, copies and memsets launched
// inside its NVTX range, descendants included, summed over the steady iterations and divided
// by their count), then achieved TFLOP/s = flops / time and GB/s = bytes / time; its
// arithmetic intensity flops / bytes against the ridge point peak_flops / peak_bandwidth of
// the run's precision decides the bound (compute at or above the ridge, memory below), and
// the % of that bound is achieved TFLOP/s / peak TFLOP/s or achieved GB/s / peak GB/s.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trace/analyses/analysis.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

// --- The sidecar ------------------------------------------------------------------------

struct LayerCostEntry {
  std::string name, parent, kind;
  std::string precision;  // the layer's own compute precision, "" when it is the run's
  double flops = 0;
  double weight_bytes = 0, input_bytes = 0, output_bytes = 0;
  double bytes() const { return weight_bytes + input_bytes + output_bytes; }
};

struct LayerCosts {
  std::string source;  // the file
  std::string model, precision, shape;
  std::vector<LayerCostEntry> layers;
  // The precision `e` computes in, whose ceiling bounds it: its own, else the run's.
  const std::string& precision_of(const LayerCostEntry& e) const { return e.precision.empty() ? precision : e.precision; }
};

// Where the bench puts the sidecar of a report or trace file: the same path with its
// extension replaced by `.layers.json` (run.sqlite -> run.layers.json, b.json -> b.layers.json).
std::string layer_costs_path(const std::string& report_or_trace);
// Throws TraceError with one sentence when the file is missing, not JSON, or not the schema.
LayerCosts read_layer_costs(const std::string& path);
LayerCosts layer_costs_from_json(const nlohmann::json& j, const std::string& source);

// --- The ceilings -----------------------------------------------------------------------

struct Ceilings {
  std::string source;  // the file
  std::string gpu;     // the device's name as CUDA gives it ("NVIDIA H200")
  std::string uuid;    // "GPU-…", when known
  double bf16_tflops = 0, tf32_tflops = 0, fp32_tflops = 0;  // dense GEMM, best of the runs
  double fp8_tflops = 0;  // e4m3 GEMM (bf16 out); 0 when the file predates it
  double copy_gbps = 0;  // device-to-device copy, bytes read + written per second / 1e9
  std::string measured;  // when and how, one line
  // The compute ceiling of a precision ("bf16", "tf32", "fp32", "fp8"; "fp16" takes bf16's: the
  // same dense tensor-core rate on the GPUs laptime runs on); throws TraceError for another,
  // and for fp8 when the file has no fp8 rate.
  double tflops(const std::string& precision) const;
};

// The default cache file for a GPU: $LAPTIME_CACHE_DIR, else $XDG_CACHE_HOME/laptime, else
// ~/.cache/laptime, then `peak-<name>.json` with the name's spaces and symbols as `_`. Keyed
// by name because a trace records the GPU's name, not its UUID.
std::string default_peak_path(const std::string& gpu_name);
nlohmann::json ceilings_to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j, const std::string& source);
Ceilings read_ceilings(const std::string& path);  // throws TraceError with one sentence

// --- One point ---------------------------------------------------------------------------

enum class RoofBound { Compute, Memory };
const char* roof_bound_name(RoofBound b);

struct RooflinePoint {
  double intensity = 0;       // FLOP per byte
  double tflops = 0;          // achieved
  double gbps = 0;            // achieved
  bool has_bound = false;     // ceilings known
  RoofBound bound = RoofBound::Memory;
  double attainable_tflops = 0;  // min(peak, intensity · bandwidth)
  double pct_of_bound = 0;       // achieved / the ceiling of its bound, in %
};

// The roofline numbers of one layer run in `seconds`; `ceilings` null: achieved only.
// For `laptime diff` too (one call per layer per side).
RooflinePoint roofline_point(double flops, double bytes, double seconds, const Ceilings* ceilings,
                             const std::string& precision);

// --- The whole run -----------------------------------------------------------------------

struct RooflineRow {
  std::string name;  // the range, or the folded pattern ("h.*.attn.c_attn") in `folded`
  std::string kind;
  size_t instances = 1;    // layers folded into the row
  double flops = 0, bytes = 0;  // per instance
  double time_ns = 0;      // per instance, per steady iteration (mean)
  RooflinePoint point;
  std::string precision;   // whose compute ceiling bounds it: the run's unless the layer says
};

struct Roofline {
  LayerCosts costs;
  std::optional<Ceilings> ceilings;
  double peak_tflops = 0, peak_gbps = 0, ridge = 0;  // of the run's precision; 0 without ceilings
  std::vector<RooflineRow> layers;  // the finest ranges measured, in the sidecar's order
  std::vector<RooflineRow> folded;  // the same with block indices folded, identical shapes together
  std::vector<std::string> notes;   // sidecar entries without a range in the trace, etc.
};

// Throws TraceError when no sidecar entry matches a range with GPU work in the steady
// iterations (a capture of another model, --nvtx none or iter, or CUDA Graph replays traced
// whole). A graph node's work counts under the ranges its node was made in (trace/analyses/graph.h).
Roofline compute_roofline(const TraceJoin& j, const Analysis& a, const LayerCosts& costs,
                          const std::optional<Ceilings>& ceilings);

// For `laptime analyze FILE`: the sidecar `layers_file`, or when that is empty the one beside
// FILE (layer_costs_path) if it exists; the ceilings `peak_file`, or when empty the cache of
// the trace's GPU (default_peak_path) if it exists. nullopt when there is no sidecar and none
// was named; a file that was named but cannot be read throws TraceError. A sidecar found
// beside the trace that matches no range (a --graph run traced whole) gives a Roofline without
// layers whose note says why; one named with --layers throws.
std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const std::string& trace_file,
                                           const std::string& layers_file, const std::string& peak_file);

void print_roofline(const Roofline& r, std::FILE* out);
nlohmann::json roofline_to_json(const Roofline& r);
// Log-log: FLOP/byte across, TFLOP/s up, the bandwidth slope and the compute roof of the
// run's precision, one labelled point per folded row. Needs ceilings.
void write_roofline_svg(const Roofline& r, const std::string& path);

}  // namespace laptime::trace
