// `laptime diff`'s inputs: each side of a diff, read from a trace (its iterations, warm-up and
// steady state found by analyze()'s rules, trace/analyses/analyze.h) or from a `laptime bench --json`
// report (per-iteration laps only), with the bench's layer costs beside it when there are
// some. A trace side keeps every GPU operation of its steady iterations with the NVTX ranges
// around its launch, and folds them into layers (aggregate_layers); trace/compare/diff.h compares two
// sides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "trace/model/category.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"
#include "trace/read/sidecars.h"

namespace laptime::trace {

// The options of a diff: the inputs read range, skip_warmup and by; the comparison the rest.
enum class LayerKey { Folded, Block };  // --by layer (h.*.attn) or --by block (h.3.attn)

struct DiffOptions {
  std::string range;               // the iteration ranges, as analyze's --range (empty: analyze's default rule)
  std::optional<int> skip_warmup;  // both sides; unset: analyze's rule on each side
  LayerKey by = LayerKey::Folded;
  int resamples = 10000;  // bootstrap resamples
  uint64_t seed = 1;      // bootstrap seed: the same inputs always give the same intervals
  double threshold_pct =
      3.0;  // SAME band, and the smallest change called FASTER/SLOWER (calibrated: docs/PROFILING.md 10.6)
  double min_change_us = 1.0;                // ... and the smallest absolute change so called
  std::optional<double> fail_if_slower_pct;  // the gate
  std::string peak;  // the ceilings for the roofline columns (laptime peak's file); empty: the GPU's cache if any
  // Layer rows the writers show (trace/analyses/top.h: unset, 15 in the text and every row in the JSON;
  // 0: every row). The verdict's counts and the gate read every row.
  std::optional<int> top;
};

// One layer of one run, over its steady iterations. Sparse: the series hold the iterations the
// layer ran in, and every other steady iteration counts 0 (PyTorch's emit_nvtx ranges with
// --by block are a layer each, in one iteration of thousands: a dense series per layer was
// layers x iterations).
struct LayerRun {
  std::string name;       // folded or not, per DiffOptions::by
  int depth = 1;          // nesting below the iteration range: 1 for a top-level layer
  size_t iterations = 0;  // the steady iterations, the series' full length
  struct Ran {
    uint32_t iteration = 0;  // steady index
    double time_ns = 0;      // GPU time of its work
    double kernels = 0;      // kernels launched inside it
    double launches = 0;     // distinct host calls that launched its work
  };
  std::vector<Ran> ran;                        // the steady iterations it ran in, ascending
  std::map<std::string, double> kernel_calls;  // kernel short name -> calls per steady iteration

  // One of the series (&Ran::time_ns, ...) with the zeros of the other iterations, as the
  // statistics take it.
  stats::SortedSample sample(double Ran::*series) const {
    std::vector<double> v;
    v.reserve(ran.size());
    for (const Ran& r : ran) v.push_back(r.*series);
    return stats::SortedSample(std::move(v), iterations - ran.size());
  }
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
  Name label;             // kernel short name, "[CUDA memcpy HtoD]", ... (the trace's pool: DiffSide::names)
  bool kernel = false;
  int api = -1;  // the launch call (index into the trace's API calls), -1 when unknown
  Category category = Category::Other;
  std::vector<Name> ranges;  // the NVTX ranges around its launch below the iteration, outermost first
};

// What ran, as far as the file says (empty where it does not): compared between the two sides
// so that a diff of different things says so before its verdict. A bench report has all of it
// (config, device); a trace has its GPU, and the model, precision and shape when the bench's
// layer costs lie beside it.
struct RunIdentity {
  std::string model, precision, shape, mode;    // mode: eager or graph
  std::map<std::string, std::string> software;  // "framework" -> "laptime", "CUDA runtime" -> "12.4", ...
  // The LAPTIME_* switches a bench report says were set ("LAPTIME_CUTLASS_PDL" -> "on"): empty
  // when none was; none at all for a report that does not record them (a trace, PyTorch's, or
  // laptime's written before the bench recorded them).
  std::optional<std::map<std::string, std::string>> switches;
};

// A bench report's energy (bench/energy.h): each block's joules and the steady laps inside it,
// between two steps of NVML's energy counter. Its energy per forward is their ratio of sums.
struct EnergyBlocks {
  std::vector<double> joules, laps;
};

struct DiffSide {
  std::shared_ptr<NamePool> names;  // the trace's, for the Names in steady_ops
  std::string file;
  std::string kind;     // "trace" or "bench report"
  std::string source;   // where the numbers came from, for the header
  std::string measure;  // what one iteration's time is
  std::string warmup_rule;
  size_t warmup = 0;                 // leading iterations dropped
  std::vector<double> series_ns;     // every iteration's time, warm-up included, in order
  std::vector<double> iteration_ns;  // the steady ones
  stats::Settling settling;          // of series_ns (a trace's: positions among all its iterations)
  std::vector<uint64_t> numbers;     // a trace's iteration numbers by position, for settling; a report's: none
  uint64_t number_of(size_t position) const { return position < numbers.size() ? numbers[position] : position; }
  bool has_layers = false;
  // Its steady iterations replay CUDA Graphs that the trace holds whole (nsys's default graph
  // trace): what ran inside them, and so their layers and kernel counts, is not known.
  bool graph_replays = false;
  bool graph_work = false;                        // any of its steady work ran in a CUDA Graph (replays or nodes)
  std::vector<LayerRun> layers;                   // by name
  std::vector<std::vector<OpRecord>> steady_ops;  // traces: per steady iteration, by start
  int median_steady = -1;                         // the steady iteration whose GPU span is the median (analyze's pick)
  std::vector<DiffBox> median_kernels, median_layers;  // that iteration, for the SVG
  Ns median_span = 0;
  std::string gpu;                  // the device's name, when the file says
  std::optional<LayerCosts> costs;  // the bench's layer costs sidecar beside the file, when there is one
  RunIdentity identity;             // with gpu above: what ran
  // A bench report's energy blocks, when it measured them; else, for a report that says why it
  // has none, that reason (as written there: data, escaped where it is shown).
  std::optional<EnergyBlocks> energy;
  std::string no_energy;
  std::vector<std::string> notes;
};

// Fills layers, has_layers and the median boxes from steady_ops.
void aggregate_layers(DiffSide& r, const DiffOptions& o);

// A side without layer ranges (a CUDA Graph replay: its kernels were launched by one
// cudaGraphLaunch inside the iteration range) whose every steady iteration runs exactly the
// kernels of `from`'s median iteration, in the same order, takes each kernel's layers from
// its counterpart. Returns whether it did.
bool borrow_layers(DiffSide& target, const DiffSide& from, const DiffOptions& o);

// Reads a trace or a bench JSON report. Throws TraceError (one sentence naming the file) when it
// cannot; a bench report's laps must be positive, finite milliseconds. `pid`: the process of the
// trace to compare; unset, a trace in which several processes have iterations is refused
// (trace/analyses/processes.h), never read as one loop.
DiffSide load_run(const std::string& path, const DiffOptions& o, std::optional<uint32_t> pid = std::nullopt);

// The layer costs file beside a run (RUN.layers.json), checked as an input: false when there
// is none, true when it is a readable regular file; throws TraceError for a FIFO, a folder, a
// device (which a read would block on or fail deep inside the JSON reader).
bool check_layer_costs_beside(const std::string& path);

// A trace already in memory (tests, and load_run for traces).
DiffSide run_from_trace(const TraceJoin& j, const DiffOptions& o, const std::string& file,
                        std::optional<uint32_t> pid = std::nullopt);

}  // namespace laptime::trace
