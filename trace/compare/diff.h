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
// A SAME row whose interval excludes zero is a change the data calls real, smaller than the line:
// it says so ("SAME within ±3%", DiffRow::same_within), never a bare SAME.
// A layer on one side only is ONLY BEFORE / ONLY AFTER. The gate (--fail-if-slower P) trips
// when a row is SLOWER by more than P%.
//
// Like analyze, in three parts: the inputs (diff_input.h: each side read and folded into
// layers), the comparison (this file: a plain Diff), the writers (diff_text.h, diff_json.h,
// diff_svg.h), which only present a Diff.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/stats.h"
#include "trace/compare/diff_input.h"
#include "trace/analyses/roofline.h"

namespace laptime::trace {

enum class Label { Faster, Slower, Same, Unclear, OnlyBefore, OnlyAfter };
const char* label_name(Label l);

// The label of a change (see the top of this file). Exposed for tests.
Label classify_change(double before_median, double change, const stats::Interval& ci, const DiffOptions& o);

struct DiffRow {
  std::string name;  // "(iteration)" for the whole iteration
  bool whole = false;
  int depth = 0;
  double before_ns = 0, after_ns = 0;  // medians over steady iterations
  double change_ns = 0, change_pct = 0;
  stats::Interval ci;  // of change_ns
  Label label = Label::Unclear;
  // SAME with an interval that excludes zero: the bound it stays within, ±t% (relative) or ±a us.
  struct Within {
    bool relative = true;
    double bound = 0;  // t in %, or a in us
  };
  std::optional<Within> same_within;
  double kernels_before = 0, kernels_after = 0, launches_before = 0, launches_after = 0;  // medians per iteration
  std::vector<std::pair<std::string, double>> gone, added;  // kernel -> calls per iteration on the side that has it
  std::string kernel_note;                                  // the appeared/disappeared kernels in words
  // Per side, where its sidecar has this layer: the roofline of the median time (the sum of
  // the FLOPs and bytes of every range the row folds; the whole iteration: the top-level ones).
  std::optional<RooflinePoint> roof_before, roof_after;
};

// DiffRow::same_within for a row so labelled; nullopt for another label or an interval with zero in it.
std::optional<DiffRow::Within> same_within(Label l, double before_median, const stats::Interval& ci,
                                           const DiffOptions& o);
// "within ±3%", "within ±1 us", or "" (the words the writers add to SAME).
std::string within_words(const std::optional<DiffRow::Within>& w);
inline std::string within_words(const DiffRow& r) { return within_words(r.same_within); }

// One thing that differs between what the two runs ran: "model", "gpt2", "resnet50".
struct RunDifference {
  std::string what, before, after;
};

// Everything both files name and name differently: model, precision, shape, mode, GPU and each
// piece of software (framework, driver, CUDA runtime, cuBLAS, cuDNN, torch). What only one
// side says is left out: nothing is known to differ there.
std::vector<RunDifference> run_differences(const DiffSide& before, const DiffSide& after);

// Energy per forward beside the lap, when both sides are bench reports that measured it
// (DiffSide::energy): each side's ratio of its blocks' joules to their laps, the change, its 95%
// interval by resampling each side's blocks (stats::bootstrap_ratio_change, the diff's seed and
// resamples), labelled by the lap's rule with --threshold alone (no absolute floor), and like a
// layer's row a SAME whose interval excludes zero says the bound it stays within.
struct EnergyRow {
  double before_j = 0, after_j = 0;  // joules per forward
  double change_j = 0, change_pct = 0;
  stats::Interval ci;  // of change_j
  Label label = Label::Unclear;
  std::optional<DiffRow::Within> same_within;  // as DiffRow's (always relative: no floor)
};
// The label of an energy change in words: LESS, MORE, SAME, UNCLEAR.
const char* energy_label_name(Label l);
// The label as the writers write it: "LESS", "SAME within ±3%".
std::string energy_label_words(const EnergyRow& e);

struct Diff {
  DiffSide before, after;
  DiffOptions options;
  std::vector<RunDifference> differences;  // run_differences(); said in the first note
  std::optional<Ceilings> ceilings;        // for the roofline columns (DiffOptions::peak, else the GPU's cache)
  std::vector<DiffRow> rows;               // the whole iteration first, then layers by absolute change
  std::optional<EnergyRow> energy;         // both sides bench reports with energy
  std::vector<std::string> notes;
  bool gate_failed = false;
  std::vector<std::string> gate_reasons;
};

Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o);

// Compares two sides: the whole iteration, then every layer both have (or either, labelled
// ONLY BEFORE / ONLY AFTER), the kernels that appeared or disappeared, the roofline columns
// and the gate. A side without layer ranges may borrow the other's (borrow_layers).
Diff diff_runs(DiffSide before, DiffSide after, const DiffOptions& o);

// Calls per iteration as the tables write them: "3" when whole, "2.50" otherwise.
std::string calls_str(double calls);

}  // namespace laptime::trace
