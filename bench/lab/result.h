// What one `laptime lab KERNEL` run found: per version its checks against the CPU reference and
// its timings per shape, with the bytes and FLOPs each call must move. Filled by run_lab
// (bench/lab/run.cpp); the text and JSON writers (bench/lab/report.cpp) only read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kernels/lab/registry.h"

namespace laptime::lab {

// One check: a version on one shape and kind of input, against the reference.
struct CheckRow {
  std::string shape;   // "rows=37 C=771 (odd rows and C)"
  std::string inputs;  // "random", "zeros", "huge"
  bool passed = false;
  bool skipped = false;             // the version does not run this shape (detail says why): not a failure
  double rel_error = 0, bound = 0;  // ‖out − ref‖ / ‖ref‖ over the rows compared, and the bound
  int64_t rows_checked = 0, rows = 0;
  std::string detail;  // on failure: the worst element, a non-finite output, or the error
};

// The timing of one version at one shape (statistics of the per-call GPU times): cold (the L2
// flushed before each call) and hot (not), bench/lab/measure.h.
struct TimingRow {
  int shape = 0;                               // index into LabResult::shapes
  int runs = 0;                                // timed calls (cold)
  bool converged = false;                      // the interval reached the target before the run or time limit
  double median_us = 0, lo_us = 0, hi_us = 0;  // cold: median and its 95% bootstrap interval
  double gbps = 0, tflops = 0;                 // bytes and FLOPs over the cold median
  double dram_pct = -1, compute_pct = -1;      // of the ceilings; negative: no ceiling
  double vs_previous = 0, vs_production = 0;   // speed-ups (their median over this one's); 0: none
  double vs_best = 0;                          // over the fastest version of the ladder at this shape
  int hot_runs = 0;                            // hot: the same without the flush
  bool hot_converged = false;
  double hot_median_us = 0, hot_lo_us = 0, hot_hi_us = 0;
  // The SM clock (NVML) while the calls were timed: the median and the lowest reading, and the
  // reasons that held it down (bench_result.h's kClockThrottles); 0 when not read.
  int sm_mhz = 0, sm_mhz_min = 0;
  uint64_t throttle = 0;
};

struct VersionResult {
  int index = 0;  // into the kernel's versions; past them, a learner's file (--try)
  std::string id, title, reason;
  bool production = false;
  // A learner's file (--try): its path as given, its SHA-256 and how it was compiled
  // ("sm_90a, NVRTC 13.0, 0.41 s" or "... from the cache"); "" for the ladder's versions.
  std::string file, sha256, compiled;
  bool is_file() const { return !file.empty(); }
  std::string refusal;  // non-empty: the version does not run here ("n/a"), and why
  std::vector<CheckRow> checks;
  bool passed() const;             // runs, and every check passed
  std::vector<TimingRow> timings;  // empty when it failed, was refused, or --once
};

struct ShapeResult {
  Shape shape;
  std::string text;  // "rows=8192 C=768"
  Cost cost;         // what a call must move at this shape
};

struct LabResult {
  std::string kernel, summary, precision, gpu;
  uint32_t seed = 0;
  bool once = false;                         // --once: one call a version and shape, for a profiler; no timing
  std::string ceilings_source;               // the peak file read, "" without one
  std::string ceilings_note;                 // why there are none, or what they are of
  double dram_gbps = 0, compute_tflops = 0;  // 0 when unknown
  double target = 0;                         // the interval's relative half-width aimed at
  std::string method;                        // how a call is timed, one sentence
  std::string stopping_rule;                 // when the timing of a version stops, one sentence
  std::string clock_note;                    // why the SM clock was not read, "" when it was
  std::vector<ShapeResult> shapes;           // the timed shapes
  std::vector<VersionResult> versions;
  std::vector<std::string> sidecars;  // layer-cost files written (--once with --json)
};

nlohmann::json lab_to_json(const LabResult& r);
void print_lab(const LabResult& r);
// One version as laptime.lab/1 writes it under "versions", and back (a learner's file's rung comes
// from the process that ran it so: bench/lab/try_child.h).
nlohmann::json version_to_json(const VersionResult& v);
VersionResult version_from_json(const nlohmann::json& j);

// `laptime lab --all`: every kernel's first version and its production, in its default precision,
// and the summary: per kernel and timed shape the two medians, the production's share of its roof
// and its speed-up over the first, and the geometric mean of those speed-ups.
struct AllSummaryRow {
  std::string kernel, precision, shape, first, production;
  double first_us = 0, production_us = 0;  // cold medians; 0 when not timed (failed or n/a)
  double roof_pct = -1;                    // production's share of its roof (DRAM, or compute where it has FLOPs)
  std::string roof;                        // "DRAM" or "compute"
  double speedup = 0;                      // first / production; 0 when either is missing
};
struct AllResult {
  std::vector<LabResult> kernels;
  std::vector<AllSummaryRow> rows;
  double geomean_speedup = 0;  // over the rows that have one
  int speedups = 0;            // how many
};
AllResult summarize_all(std::vector<LabResult> kernels);
void print_all(const AllResult& a);
nlohmann::json all_to_json(const AllResult& a);
// `laptime lab --list`: one line a version; and as JSON (schema laptime.lab.list/1).
void print_lab_list();
nlohmann::json lab_list_json();

}  // namespace laptime::lab
