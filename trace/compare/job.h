// `laptime analyze A B C ...`: the reports of one job side by side (one per rank, written by
// `nsys profile -o run_%q{RANK}` under torchrun, or a CI fleet's hundreds), and the straggler.
//
// Inputs: files, folders (their .sqlite, .nsys-rep, .qdrep, .pt.trace.json and .json.gz files, in
// natural order: run_2 before run_10) and globs laptime expands itself ('runs/*.nsys-rep', quoted). A report is one
// file, whatever it is called: its identity is the file's device and inode after links, so
// `./r.sqlite` beside `r.sqlite`, a symbolic or a hard link to it, and an export named beside
// its report (R.sqlite with R.nsys-rep, however spelled) are read once, and a note names them.
//
// Each report is analyzed exactly as `laptime analyze FILE` analyzes it (per_process.h: one row
// per process with a loop), summarized into a few rows (lap, busy %, verdict, its iterations and
// layers) and its trace freed, on a pool of at most `workers` threads (default: the machine's
// cores): memory is bounded by the reports in flight, not by the job's size. A thread that
// cannot start (a process limit, address space) leaves the pool smaller, never stops the job.
//
// The summary below is computed here once, whether the rows were read by this pool or by many
// machines (laptime.analyze_many on Dask runs `laptime analyze --job FILE --json` per report and
// hands the documents back through job_rows_from_json): one rule, one answer.
//
// Then the job view: every row's lap, busy % and verdict; the spread (slowest, fastest, median:
// the lower median of the rows' laps, ties in input order); and the straggler: the slowest row's
// layers against the median row's by diff's machinery (trace/compare/diff.h: medians over steady
// iterations, 95% bootstrap intervals, labels), naming the layer that makes the difference: the
// SLOWER (or ONLY AFTER) layer whose time grew most, or the nested layer inside it that carries
// most of that (straggler_layer). The gate (--fail-if-spread PCT) trips when
// the slowest row's lap is more than PCT% above the median row's. The straggler's comparison
// reads the SQLite file each report was read through (an .nsys-rep's export), never the report.
//
// Computed here into a plain Job; trace/write/job_text.h and job_json.h present it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/analyses/analyze.h"
#include "trace/compare/diff.h"

namespace laptime::trace {

struct JobOptions {
  ReportOptions report;  // every report's analysis (--range, --pid, --skip-warmup, --gap-us, --top)
  // The straggler's comparison; its range and skip_warmup are report's. Every layer row is kept
  // (the text shows the first --top).
  DiffOptions diff;
  std::optional<double> fail_if_spread_pct;
  unsigned workers = 0;  // reports in flight at once; 0: std::thread::hardware_concurrency()
};

// A report's iteration as the job keeps it (the fields of analyze's JSON "iterations").
struct JobIteration {
  uint64_t index = 0;
  bool steady = false;
  Ns host_ns = 0;
  bool has_gpu = false;
  Ns gpu_ns = 0;
  double span_fill_pct = 0;  // Iteration::span_fill_pct
};

// A layer row (analyze's kernel_mix range_patterns: block indices folded).
struct JobLayer {
  std::string range;
  size_t count = 0;
  Ns time_ns = 0;
};

// One process of one report: the report itself when it holds one loop.
struct JobRow {
  std::string file;
  // Set when the report holds several processes with loops, or --pid named one: the row is that
  // process's (`laptime analyze FILE --pid N`).
  std::optional<uint32_t> pid;
  std::string process;  // its name ("python"), with pid
  std::string gpu, program;
  double lap_ms = 0;
  std::string lap_source;
  double span_fill_pct = 0;  // median over steady iterations of each one's fill (Iteration::span_fill_pct)
  Bound bound = Bound::NoGpuWork;
  std::string verdict;
  size_t steady_iterations = 0;
  std::vector<JobIteration> iterations;
  std::vector<JobLayer> layers;  // the first --top rows (all without --top), as analyze's JSON
  std::vector<std::string> notes;
};

struct JobSpread {
  size_t slowest = 0, fastest = 0, median = 0;  // indices into Job::rows
  double slowest_over_median_pct = 0, slowest_over_fastest_pct = 0;
};

struct Straggler {
  size_t slowest = 0, median = 0;  // indices into Job::rows
  Diff diff;                       // BEFORE: the median row's report, AFTER: the slowest's
  int layer = -1;                  // the row of diff.rows that makes the difference, -1: none
  std::string sentence;            // what it found, in words
  std::string command;             // the `laptime diff` that shows it in full
};

struct Job {
  std::vector<std::string> inputs;  // the report files, in order
  std::vector<JobRow> rows;         // by input, then pid
  std::vector<std::string> notes;
  unsigned workers = 1;
  std::optional<JobSpread> spread;  // two rows or more
  std::optional<Straggler> straggler;
  std::optional<int> top;  // ReportOptions::top, for the text's straggler table
  std::optional<double> gate_pct;
  bool gate_failed = false;
  std::string gate_reason;
};

// At most this many reports in one job.
constexpr size_t kMaxJobReports = 100000;

// The report files `args` name, each report once (see the top of this file). Throws TraceError
// for a folder that holds no trace, a glob that matches nothing, more than kMaxJobReports. Notes
// (the files read once under another name) go to `notes`.
std::vector<std::string> expand_report_inputs(const std::vector<std::string>& args, std::vector<std::string>& notes);

// Natural order of file names: digit runs compare as numbers ("run_2" < "run_10").
bool natural_less(const std::string& a, const std::string& b);

// One report's rows (`laptime analyze FILE` as the job sees it). Throws TraceError.
std::vector<JobRow> report_rows(const std::string& file, const ReportOptions& o);

// The job over already expanded files: each report in the pool, then the spread, the straggler
// and the gate. Throws TraceError for the first report (in input order) that cannot be read,
// naming it.
Job analyze_job(const std::vector<std::string>& files, const JobOptions& o);

// The same job from rows read elsewhere: `each[i]` the rows of `files[i]`. The straggler reads
// its two reports here (through open_trace_source: an .nsys-rep's export beside it).
Job job_from_rows(const std::vector<std::string>& files, std::vector<std::vector<JobRow>> each, const JobOptions& o);

// The rows of each file from `path`: a JSON array of laptime.job/1 documents, the i-th written by
// `laptime analyze --job FILES[i] --json` (its "reports"). Throws TraceError when the file is not
// that (a document for another file, a field of the wrong type), in one sentence.
std::vector<std::vector<JobRow>> job_rows_from_json(const std::string& path, const std::vector<std::string>& files);

// Runs work(i) for i in [0, n) on at most `workers` threads (this one included), each taking the
// next index when it is done with one; after a failure no new index is started. A thread that
// cannot start leaves the pool smaller (`started` says how many ran; at least this one). Returns
// the failures by index.
std::map<size_t, std::string> run_pool(size_t n, unsigned workers, const std::function<void(size_t)>& work,
                                       unsigned* started = nullptr);

// The straggler's layer: the SLOWER or ONLY AFTER layer row whose time grew most, then, level by
// level, its nested layer (h.*.attn in h.*) that grew most if that is at least half of its
// parent's growth; -1 for none.
int straggler_layer(const Diff& d);

}  // namespace laptime::trace
