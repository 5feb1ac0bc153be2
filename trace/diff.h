// `laptime diff BEFORE AFTER`: what changed between two runs, layer by layer, and whether
// the change is real.
//
// Each side is a trace (nsys SQLite export or `laptime bench --trace`) or a `laptime bench
// --json` report (per-iteration laps only). Iterations are found and warm-up is dropped by
// analyze()'s rules; layers are the NVTX ranges inside an iteration, matched by name with the
// block index folded (h.3.attn -> h.*.attn) or kept (--by block). A layer's time in one
// iteration is the GPU time of the work launched inside its range, nested ranges included
// (so h.*.attn holds h.*.attn.core): the sum of kernel, copy and memset durations. The whole
// iteration's time is its GPU span (first start to last end), as analyze reports it.
//
// For every row: the median over each side's steady iterations, the change of the medians,
// and its 95% percentile-bootstrap interval (each side resampled independently; fixed seed),
// labelled so (t = --threshold, default 3%; a = --min-change-us, default 1 us; changes and
// bounds relative to the BEFORE median):
//   SLOWER   the interval lies above zero and the change is at least +t and at least +a
//   FASTER   the interval lies below zero and the change is at most -t and at most -a
//   SAME     otherwise, when the whole interval lies within ±t (or within ±a)
//   UNCLEAR  otherwise: too noisy to tell at this size
// A layer on one side only is ONLY BEFORE / ONLY AFTER. The gate (--fail-if-slower P) trips
// when a row is SLOWER by more than P%.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "trace/error.h"
#include "trace/report.h"
#include "trace/roofline.h"
#include "trace/stats.h"

namespace laptime::trace {

enum class LayerKey { Folded, Block };  // --by layer (h.*.attn) or --by block (h.3.attn)

struct DiffOptions {
  std::string range;               // the iteration ranges, as analyze's --range (empty: analyze's default rule)
  std::optional<int> skip_warmup;  // both sides; unset: analyze's rule on each side
  LayerKey by = LayerKey::Folded;
  int resamples = 10000;  // bootstrap resamples
  uint64_t seed = 1;      // bootstrap seed: the same inputs always give the same intervals
  double threshold_pct = 3.0;  // SAME band, and the smallest change called FASTER/SLOWER (calibrated: docs/PROFILING.md 10.6)
  double min_change_us = 1.0;  // ... and the smallest absolute change so called
  std::optional<double> fail_if_slower_pct;  // the gate
  std::string peak;  // the ceilings for the roofline columns (laptime peak's file); empty: the GPU's cache if any
};

enum class Label { Faster, Slower, Same, Unclear, OnlyBefore, OnlyAfter };
const char* label_name(Label l);

// The label of a change (see the top of this file). Exposed for tests.
Label classify_change(double before_median, double change, const Interval& ci, const DiffOptions& o);

// One layer of one run, over its steady iterations.
struct LayerRun {
  std::string name;  // folded or not, per DiffOptions::by
  int depth = 1;     // nesting below the iteration range: 1 for a top-level layer
  std::vector<double> time_ns;    // per steady iteration (0 where the layer did not run)
  std::vector<double> kernels;    // per steady iteration: kernels launched inside it
  std::vector<double> launches;   // per steady iteration: distinct host calls that launched its work
  std::map<std::string, double> kernel_calls;  // kernel short name -> calls per steady iteration
};

// A box of the median iteration, times from that iteration's GPU start.
struct DiffBox {
  Ns start = 0, end = 0;
  std::string name;  // kernel label, or the layer's own (unfolded) range name
  int depth = 0;     // layers: nesting below the iteration range; kernels: 0
  Category category = Category::Other;
};

// One GPU operation of a steady iteration, as the layer tables need it.
struct OpRecord {
  Ns start = 0, end = 0;  // from the iteration's GPU start
  std::string label;      // kernel short name, "[CUDA memcpy HtoD]", ...
  bool kernel = false;
  int api = -1;           // the launch call (index into the trace's API calls), -1 when unknown
  Category category = Category::Other;
  std::vector<std::string> ranges;  // the NVTX ranges around its launch below the iteration, outermost first
};

struct DiffSide {
  std::string file;
  std::string kind;     // "trace" or "bench report"
  std::string source;   // where the numbers came from, for the header
  std::string measure;  // what one iteration's time is
  std::string warmup_rule;
  size_t warmup = 0;                  // leading iterations dropped
  std::vector<double> series_ns;      // every iteration's time, warm-up included, in order
  std::vector<double> iteration_ns;   // the steady ones
  SteadyState steady;                 // of series_ns
  bool has_layers = false;
  std::vector<LayerRun> layers;       // by name
  std::vector<std::vector<OpRecord>> steady_ops;  // traces: per steady iteration, by start
  int median_steady = -1;  // the steady iteration whose GPU span is the median (analyze's pick)
  std::vector<DiffBox> median_kernels, median_layers;  // that iteration, for the SVG
  Ns median_span = 0;
  std::string gpu;                   // the device's name, when the file says
  std::optional<LayerCosts> costs;   // the bench's layer costs sidecar beside the file, when there is one
  std::vector<std::string> notes;
};

// Fills layers, has_layers and the median boxes from steady_ops.
void aggregate_layers(DiffSide& r, const DiffOptions& o);

// A side without layer ranges (a CUDA Graph replay: its kernels were launched by one
// cudaGraphLaunch inside the iteration range) whose every steady iteration runs exactly the
// kernels of `from`'s median iteration, in the same order, takes each kernel's layers from
// its counterpart. Returns whether it did.
bool borrow_layers(DiffSide& target, const DiffSide& from, const DiffOptions& o);

// Reads a trace or a bench JSON report. Throws TraceError (one sentence) when it cannot.
DiffSide load_run(const std::string& path, const DiffOptions& o);

// A trace already in memory (tests, and load_run for traces).
DiffSide run_from_trace(const TraceJoin& j, const DiffOptions& o, const std::string& file);

struct DiffRow {
  std::string name;  // "(iteration)" for the whole iteration
  bool whole = false;
  int depth = 0;
  double before_ns = 0, after_ns = 0;  // medians over steady iterations
  double change_ns = 0, change_pct = 0;
  Interval ci;  // of change_ns
  Label label = Label::Unclear;
  double kernels_before = 0, kernels_after = 0, launches_before = 0, launches_after = 0;  // medians per iteration
  std::vector<std::pair<std::string, double>> gone, added;  // kernel -> calls per iteration on the side that has it
  std::string kernel_note;  // the appeared/disappeared kernels in words
  // Per side, where its sidecar has this layer: the roofline of the median time (the sum of
  // the FLOPs and bytes of every range the row folds; the whole iteration: the top-level ones).
  std::optional<RooflinePoint> roof_before, roof_after;
};

struct Diff {
  DiffSide before, after;
  DiffOptions options;
  std::optional<Ceilings> ceilings;  // for the roofline columns (DiffOptions::peak, else the GPU's cache)
  std::vector<DiffRow> rows;  // the whole iteration first, then layers by absolute change
  std::vector<std::string> notes;
  bool gate_failed = false;
  std::vector<std::string> gate_reasons;
};

Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o);

void print_diff(const Diff& d, std::FILE* out);
nlohmann::json diff_to_json(const Diff& d);  // schema laptime.diff/1
// The two median iterations one above the other on one time axis, layers joined by lines.
void write_diff_svg(const Diff& d, const std::string& path);

// The warning for a run whose laps settle after its warm-up ends, or "" when they do not.
// `start` and `warmup` count iterations from the first one.
std::string warmup_warning(const SteadyState& s, size_t warmup, const std::string& what);

// Where an analyzed trace's iterations settle: steady_state() over the GPU span of every
// iteration with GPU work, warm-up included (analyze and diff report it; the warning goes
// into the notes when the warm-up the analysis dropped ends before the laps settle).
struct IterationSteadyState {
  SteadyState steady;       // start: an index into Analysis::iterations
  size_t warmup = 0;        // leading iterations the analysis dropped as warm-up
  std::string text;         // one line for the report, "" when no iteration has GPU work
  std::string warning;      // warmup_warning(), or ""
};
IterationSteadyState iteration_steady_state(const Analysis& a);
nlohmann::json steady_state_json(const IterationSteadyState& s);

}  // namespace laptime::trace
