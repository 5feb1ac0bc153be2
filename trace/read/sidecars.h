// The two small JSON files laptime reads beside a trace (trace/ knows nothing of the models):
//   - the layer costs sidecar (schema laptime.layers/1) the bench writes beside its --json
//     and --trace files: every NVTX range's FLOPs and bytes for the shapes built;
//   - the device's ceilings (schema laptime.peak/1) measured by `laptime peak`: a GEMM per
//     precision (TFLOP/s) and a device-to-device copy (GB/s), cached per GPU name.
// The roofline (trace/analyses/roofline.h) and `laptime kernels` hold a run against both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace laptime::trace {

// JSON read from a file laptime did not write (a sidecar, a peak file, a bench report):
// nesting deeper than kMaxJsonDepth is refused before it is parsed (a 40 MiB `[[[[...` once took
// 2.4 GB and ended in "unexpected error: std::bad_alloc"). Throws TraceError with one sentence
// naming `path`; nlohmann's own exception for text that is not JSON, for the caller's sentence.
constexpr size_t kMaxJsonDepth = 64;
nlohmann::json parse_untrusted_json(const std::string& text, const std::string& path);

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
  const std::string& precision_of(const LayerCostEntry& e) const {
    return e.precision.empty() ? precision : e.precision;
  }
};

// Where the bench puts the sidecar of a report or trace file: the same path with its
// extension replaced by `.layers.json` (run.sqlite -> run.layers.json, b.json -> b.layers.json).
std::string layer_costs_path(const std::string& report_or_trace);
// Throws TraceError with one sentence when the file is missing, not JSON, or not the schema.
LayerCosts read_layer_costs(const std::string& path);
LayerCosts layer_costs_from_json(const nlohmann::json& j, const std::string& source);

// --- The ceilings -----------------------------------------------------------------------

struct Ceilings {
  std::string source;                                        // the file
  std::string gpu;                                           // the device's name as CUDA gives it ("NVIDIA H200")
  std::string uuid;                                          // "GPU-…", when known
  double bf16_tflops = 0, tf32_tflops = 0, fp32_tflops = 0;  // dense GEMM, best of the runs
  double fp8_tflops = 0;                                     // e4m3 GEMM (bf16 out); 0 when the file predates it
  double copy_gbps = 0;  // device-to-device copy, bytes read + written per second / 1e9
  std::string measured;  // when and how, one line
  // The compute ceiling of a precision ("bf16", "tf32", "fp32", "fp8"; "fp16" takes bf16's: the
  // same dense tensor-core rate on the GPUs laptime runs on); throws TraceError for another,
  // and for fp8 when the file has no fp8 rate.
  double tflops(const std::string& precision) const;
};

// laptime's cache folder, for what it measured or built once for the next runs (the peak
// ceilings below; the lab's compiled kernel files in its nvrtc/): $LAPTIME_CACHE_DIR, else
// $XDG_CACHE_HOME/laptime, else ~/.cache/laptime, else ".".
std::string cache_folder();
// The default cache file for a GPU: $LAPTIME_CACHE_DIR, else $XDG_CACHE_HOME/laptime, else
// ~/.cache/laptime, then `peak-<name>.json` with the name's spaces and symbols as `_`. Keyed
// by name because a trace records the GPU's name, not its UUID.
std::string default_peak_path(const std::string& gpu_name);
// Every ceilings file in that cache (peak-*.json): what a command may read as the ceilings of
// the trace's GPU before it knows the GPU, so no output of it may replace one.
std::vector<std::string> peak_cache_files();
nlohmann::json ceilings_to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j, const std::string& source);
Ceilings read_ceilings(const std::string& path);  // throws TraceError with one sentence

// Where a command's ceilings come from, the one rule every command follows (analyze's roofline,
// diff's roofline columns, kernels, lab): the file --peak names, where a bad file is an error
// (TraceError), else `laptime peak`'s cache for `gpu` when there is one, where a damaged cache is
// a note and no ceilings (the report carries on with achieved rates). No cache, or no GPU name:
// neither ceilings nor a note. Whether the cache is there is asked without opening it (a FIFO
// would block the open).
struct FoundCeilings {
  std::optional<Ceilings> ceilings;
  std::string note;  // why the cache was not used: "CACHE is not a JSON peak file. Run `laptime peak --force` ..."
};
FoundCeilings find_ceilings(const std::string& peak_file, const std::string& gpu);

}  // namespace laptime::trace
