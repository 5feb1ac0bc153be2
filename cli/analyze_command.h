// `laptime analyze FILE`: answer the baseline questions from a trace — steady-state time
// per iteration, GPU utilization and its gaps, the kernel mix, synchronizations inside the
// loop — and optionally export it for Perfetto or draw one iteration as SVG.
//
// FILE is Nsight Systems' SQLite export (`nsys export --type sqlite REPORT.nsys-rep`), the
// report itself (read through that export, trace/read/nsys_export.h), or a trace written by
// `laptime bench --trace`. Several files, a folder or a glob (or --job) give the job view instead:
// one row per report and process, the spread, the straggler (trace/compare/job.h). The work lives
// in trace/ (laptime_trace, host-only); this file is the command line around it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/model/error.h"
#include "trace/analyses/analyze.h"

namespace CLI {
class App;
}

namespace laptime {

struct AnalyzeOptions {
  std::string file;                      // the first of `files` (the one trace, outside the job view)
  std::vector<std::string> files;        // as given: several, a folder or a glob make the job view
  bool job = false;                      // --job: the job view even for one report
  std::optional<int> workers;            // --workers: reports read at once (default: the cores)
  std::optional<double> fail_if_spread;  // --fail-if-spread PCT: exit 3 (kExitGateFailed) above it
  bool list_reports = false;             // --list-reports: the reports the job would read, and stop
  std::string rows_from;                 // --rows-from FILE: each report's rows as read elsewhere
  trace::ReportOptions report;           // --range, --pid, --skip-warmup, --gap-us, --top
  std::string json;                      // the same numbers as JSON (schema laptime.analyze/1)
  std::string perfetto;                  // Chrome Trace Event JSON of the trace, or of a window of it
  std::string window;                    // --window: what --perfetto exports ("" = auto, trace/write/perfetto.h)
  bool quiet = false;                    // --quiet: no progress line (trace/model/progress.h)
  std::string svg;                       // one steady iteration as a timeline
  std::string layers;                    // layer costs sidecar (default: beside the trace, trace/analyses/roofline.h)
  std::string peak;                      // ceilings from `laptime peak` (default: the cache of the trace's GPU)
  std::string roofline_svg;              // the per-layer roofline plot
  std::string html;                      // the report page: the JSON's numbers drawn (trace/write/html_page.h)
};

// Adds the `analyze` subcommand to `app`, filling `o` when it is parsed; returns it so the
// caller can ask parsed().
CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeOptions& o);

// Prints the report to stdout and writes the files asked for. A trace that cannot be read
// or analyzed throws laptime::TraceError with one sentence.
int run_analyze(const AnalyzeOptions& o);

}  // namespace laptime
