// `laptime kernels REPORT`: an Nsight Compute report per layer, and why each layer runs as it
// does.
//
// Grouping. Each kernel belongs to the innermost push/pop NVTX range open on its launching
// thread (the last entry ncu lists; with --domain, the last one of that domain), with block
// indices folded as analyze folds them (h.3.attn.c_attn -> h.*.attn.c_attn, "Layer 4" ->
// "Layer *": fold_block_indices) or kept (--by block). A kernel with no range is "(no range)".
//
// Per layer, over its kernels (each replayed alone by ncu: caches flushed, clocks locked):
//   kernels, GPU time (the sum of gpu__time_duration), DRAM bytes (the sum of each kernel's
//   dram__bytes rate x its duration) and their rate; FP32/FP64 FLOPs counted from the SASS
//   instruction counters (fadd + fmul + 2 ffma, the same for doubles: CUDA-core work only,
//   tensor-core work is not in these counters); speed of light as % of the device's peak:
//   DRAM, memory (the busiest of L1, L2, DRAM), compute (the busiest SM pipe or issue), the
//   tensor pipe; achieved and theoretical occupancy and warps per scheduler: these are means
//   over the kernels weighted by their time. Launch figures (grid, block, registers, shared
//   memory, waves, what caps occupancy) are the layer's longest kernel's. Stall reasons: the
//   cycles a warp spends stalled on each reason per issued instruction, weighted by the kernels'
//   executed instructions. A sum (DRAM bytes, FLOPs) is shown only when every kernel of the
//   layer has its metric; a mean is over the kernels that have it.
//
// With the bench's layer costs (RUN.layers.json, trace/analyses/roofline.h) a layer whose ranges are all
// in the sidecar also gets the bytes it must move and its FLOPs (the sums over its ranges; a
// composite range whose parts are rows of their own gets none), the ratio of the DRAM bytes it
// moved to those it must move, and its roofline point with the measured traffic: intensity =
// FLOPs / DRAM bytes, TFLOP/s = FLOPs / GPU time, bound and % of bound against the ceilings.
//
// The diagnosis: one line per layer from these numbers, by the first rule that applies
// (thresholds in NcuThresholds, docs/PROFILING.md 13.4 gives the reasons):
//   dram-bound-excess  DRAM >= 80% of peak and moved/must >= 1.5
//   dram-bound         DRAM >= 80%
//   compute-bound      compute >= 80%
//   on-chip-bound      memory >= 80% (L1, shared or L2: DRAM is below 80%)
//   excess-traffic     moved/must >= 1.5
//   small-grid         the longest kernel's grid fills under 0.5 of a wave
//   latency-pipeline   compute and memory < 60%, one block of >= 384 threads a SM capped by shared
//                      memory, the tensor pipe >= 90% of its compute: a warp-specialized TMA/wgmma
//                      kernel, whose few warps are its design (cuBLASLt's, cuDNN's, CUTLASS's GEMMs)
//   latency-occupancy  compute and memory < 60%, under 4 warps a scheduler
//   latency-stalls     compute and memory < 60%
//   no-single-limit    otherwise (one of them between 60% and 80%)
//   unknown            the report has no speed-of-light metrics
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trace/compare/diff_input.h"
#include "trace/ncu/ncu_csv.h"
#include "trace/analyses/program.h"
#include "trace/analyses/roofline.h"

namespace laptime::trace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct NcuLayerOptions {
  LayerKey by = LayerKey::Folded;
  std::string domain;  // only ranges of this domain ("<default domain>" or "default" for none); empty: any
  // The process whose kernels are read (--pid). Unset: the report's only one; a report of
  // several processes is refused, naming them (each is a run of its own, as analyze says).
  std::optional<uint32_t> pid;
};

struct NcuThresholds {
  double at_limit_pct = 80;       // a throughput at or above this % of peak is at its limit (ncu's own rule)
  double latency_pct = 60;        // compute and memory both under this: latency (ncu's own rule)
  double excess_bytes = 1.5;      // moved / must move at or above this: data is re-read
  double small_grid_waves = 0.5;  // the grid fills less than this much of one wave
  double few_warps = 4;           // warps a scheduler under this cannot hide latency
};

struct NcuStall {
  std::string reason;  // ncu's name: "long_scoreboard"
  double cycles = 0;   // per issued instruction
};

// What the diagnosis reads. NaN where the report has no value.
struct NcuLayerMetrics {
  double dram_pct = kNaN, memory_pct = kNaN, compute_pct = kNaN, tensor_pct = kNaN;
  double occupancy_pct = kNaN, theoretical_pct = kNaN, warps_per_scheduler = kNaN;
  double bytes_ratio = kNaN;  // moved / must move (needs the layer costs)
  // The longest kernel's launch.
  double waves = kNaN, grid = kNaN, block = kNaN, registers = kNaN, shared_bytes = kNaN;
  double blocks_per_sm = kNaN;        // the smallest of the occupancy limits
  std::vector<std::string> limiters;  // what sets it, when theoretical occupancy is under 100%
  double sm_count = kNaN;
  size_t kernels = 1;            // in the layer (the launch figures are its longest's)
  std::vector<NcuStall> stalls;  // largest first, ncu's "selected" left out
};

enum class NcuRule {
  DramBoundExcess,
  DramBound,
  ComputeBound,
  OnChipBound,
  ExcessTraffic,
  SmallGrid,
  LatencyPipeline,
  LatencyOccupancy,
  LatencyStalls,
  NoSingleLimit,
  Unknown
};
const char* ncu_rule_name(NcuRule r);

struct NcuDiagnosis {
  NcuRule rule = NcuRule::Unknown;
  std::string text;
};

// The first rule of the list above that applies, and its sentence.
NcuDiagnosis diagnose(const NcuLayerMetrics& m, const NcuThresholds& t = {});

// A few words on what a stall reason means ("long_scoreboard" -> "waiting for global or local
// memory"); empty for a reason without a gloss.
const char* stall_gloss(const std::string& reason);

struct NcuLayerKernel {
  int64_t id = 0;
  uint32_t name = 0;  // its short name: an index into its layer's kernel_names
  double time_ns = 0;
  double dram_bytes = kNaN;
};

struct NcuLayer {
  std::string name;                 // the range (or its folded pattern); "(no range)"
  std::string domain;               // of its ranges ("" when they span several)
  std::vector<std::string> ranges;  // the exact range names folded into it, first seen first
  size_t kernels = 0;
  double time_ns = 0;
  double share = 0;          // of the report's GPU time
  double dram_bytes = kNaN;  // sum; NaN when a kernel lacks it
  double dram_gbps = kNaN;
  double counted_flops = kNaN;  // FP32 + FP64 from the instruction counters
  double counted_gflops = kNaN;
  NcuLayerMetrics m;
  std::string longest;                    // the longest kernel's short name
  std::vector<std::string> kernel_names;  // distinct short names, first seen first
  std::vector<NcuLayerKernel> rows;       // every kernel, in the report's order
  // With the layer costs:
  bool has_costs = false;
  double must_flops = 0, must_bytes = 0;
  double must_read = 0;      // of must_bytes, the weights and inputs (outputs are the rest)
  double read_ratio = kNaN;  // DRAM bytes over must_read: writes may still sit in L2 when a kernel ends
  std::string precision;     // whose ceiling bounds it
  RooflinePoint measured;    // flops over DRAM bytes and over time
  NcuDiagnosis diagnosis;
};

struct NcuLayers {
  std::string source, converted_by, gpu;
  std::string process;  // the program the kernels ran in, as ncu names it ("" when it does not)
  int sm_count = 0;
  LayerKey by = LayerKey::Folded;
  std::string domain;
  size_t kernels = 0;
  double time_ns = 0, dram_bytes = kNaN;
  double dram_peak_gbps = kNaN;  // the device's DRAM peak as ncu gives it
  std::vector<NcuLayer> layers;  // by GPU time, largest first
  std::optional<LayerCosts> costs;
  std::optional<Ceilings> ceilings;
  std::vector<std::string> notes;
  // Who made the report (trace/analyses/program.h's rules on its kernels and ranges): what a
  // missing piece is said in terms of.
  Program program = Program::Other;
};

// Groups, sums and diagnoses. `costs` and `ceilings` may be null. Throws TraceError when
// --domain names a domain no kernel has a range in, when the report holds several processes and
// no --pid, or when --pid names none of them.
NcuLayers ncu_layers(const NcuReport& r, const NcuLayerOptions& o, const LayerCosts* costs, const Ceilings* ceilings,
                     const NcuThresholds& t = {});

void print_ncu_layers(const NcuLayers& l, std::FILE* out);
nlohmann::json ncu_layers_to_json(const NcuLayers& l);
nlohmann::json ncu_layer_to_json(const NcuLayer& x);  // one row of it

// The JSON text of a report or a diff as `j.dump(2)` writes it, strings escaped
// (escape_json_strings), with every layer's per-kernel list written row by row instead of held
// as a tree: a million kernels' rows are a gigabyte of nlohmann objects and a few hundred MB of
// text. `j` is made by the functions above with a DeferredKernelLists: each layer's
// `kernel_list` is then a marker that this replaces with the layer's rows.
class DeferredKernelLists {
 public:
  DeferredKernelLists();
  nlohmann::json marker(const NcuLayer& x);  // the placeholder for x's rows, remembered
  std::string text(nlohmann::json j) const;

 private:
  std::string prefix_;
  std::vector<const NcuLayer*> layers_;
};
nlohmann::json ncu_layers_to_json(const NcuLayers& l, DeferredKernelLists* deferred);
nlohmann::json ncu_layer_to_json(const NcuLayer& x, DeferredKernelLists* deferred);
// The roofline of the layers with costs, at their measured traffic (filled points) and at the
// traffic the sidecar assumes (hollow, joined by a line). Needs costs and ceilings.
void write_ncu_roofline_svg(const NcuLayers& l, const std::string& path);

}  // namespace laptime::trace
