// The per-layer roofline: how far each layer of a traced run is from the limit that applies.
//
// Inputs, both optional for `laptime analyze` (trace/read/sidecars.h): the layer costs the bench
// writes beside its reports (every NVTX range's FLOPs and bytes) and the device's ceilings
// measured by `laptime peak`. Presented by trace/write/roofline.h.
// Per layer: its GPU time per steady iteration (the kernels, copies and memsets launched
// inside its NVTX range, descendants included, summed over the steady iterations and divided
// by their count), then achieved TFLOP/s = flops / time and GB/s = bytes / time; its
// arithmetic intensity flops / bytes against the ridge point peak_flops / peak_bandwidth of
// the run's precision decides the bound (compute at or above the ridge, memory below), and
// the % of that bound is achieved TFLOP/s / peak TFLOP/s or achieved GB/s / peak GB/s.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/analyses/analysis.h"
#include "trace/read/sidecars.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

// --- One point ---------------------------------------------------------------------------

enum class RoofBound { Compute, Memory };
const char* roof_bound_name(RoofBound b);

struct RooflinePoint {
  double intensity = 0;    // FLOP per byte
  double tflops = 0;       // achieved
  double gbps = 0;         // achieved
  bool has_bound = false;  // ceilings known
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
  size_t instances = 1;         // layers folded into the row
  double flops = 0, bytes = 0;  // per instance
  double time_ns = 0;           // per instance, per steady iteration (mean)
  RooflinePoint point;
  std::string precision;  // whose compute ceiling bounds it: the run's unless the layer says
};

struct Roofline {
  LayerCosts costs;
  std::optional<Ceilings> ceilings;
  double peak_tflops = 0, peak_gbps = 0, ridge = 0;  // of the run's precision; 0 without ceilings
  std::vector<RooflineRow> layers;                   // the finest ranges measured, in the sidecar's order
  std::vector<RooflineRow> folded;                   // the same with block indices folded, identical shapes together
  std::vector<std::string> notes;                    // sidecar entries without a range in the trace, etc.
};

// Throws TraceError when no sidecar entry matches a range with GPU work in the steady
// iterations (a capture of another model, --nvtx none or iter, or CUDA Graph replays traced
// whole). A graph node's work counts under the ranges its node was made in (trace/analyses/graph.h).
Roofline compute_roofline(const TraceJoin& j, const Analysis& a, const LayerCosts& costs,
                          const std::optional<Ceilings>& ceilings);

// What a trace's roofline reads besides the trace, read and checked before the analysis, so that a
// run that cannot draw it stops before it prints or writes anything (read_roofline_inputs, then,
// once the trace is read, add_cached_ceilings).
struct RooflineInputs {
  std::string trace_file;
  std::optional<LayerCosts> costs;   // nullopt: none named and none beside the trace
  bool costs_named = false;          // --layers: a sidecar that matches no range is an error
  std::optional<Ceilings> ceilings;  // --peak, else the cache of the trace's GPU when it is there
  std::string cache_note;            // a damaged cache: why there are no ceilings
};
// The sidecar `layers_file`, or when that is empty the one beside `trace_file` (layer_costs_path)
// if it exists; the ceilings `peak_file` when given. A file that was named but cannot be read, or
// one beside the trace that is not a sidecar, throws TraceError.
RooflineInputs read_roofline_inputs(const std::string& trace_file, const std::string& layers_file,
                                    const std::string& peak_file);
// Without ceilings from --peak: those of the trace's GPU from the cache (default_peak_path), if any.
void add_cached_ceilings(const TraceJoin& j, RooflineInputs& in);
// The sentence refusing --roofline-svg with these inputs ("" when they can draw it): no layer costs,
// or no ceilings (the plot draws the roofs).
std::string roofline_svg_refusal(const RooflineInputs& in);
extern const char* const kRooflineNeedsCeilings;

// nullopt when there is no sidecar. A sidecar found beside the trace that matches no range (a
// --graph run traced whole) gives a Roofline without layers whose note says why; one named with
// --layers throws.
std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const RooflineInputs& in);
// The three steps at once (tests, and callers with nothing to check first).
std::optional<Roofline> roofline_for_trace(const TraceJoin& j, const Analysis& a, const std::string& trace_file,
                                           const std::string& layers_file, const std::string& peak_file);

}  // namespace laptime::trace
