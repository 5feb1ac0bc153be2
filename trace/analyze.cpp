#include "trace/analyze.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trace/nsys_sqlite.h"
#include "trace/perfetto.h"
#include "trace/svg.h"
#include "trace/text.h"
#include "trace/validate.h"

namespace laptime {

CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "analyze", "answer the baseline questions from a trace: nsys SQLite export or `laptime bench --trace` file");
  // No ExistingFile check: the trace reader says what is wrong with a path in one sentence,
  // including what to do with an .nsys-rep.
  sub->add_option("file", o.file, "trace: `nsys export --type sqlite REPORT.nsys-rep` output, or laptime's own")
      ->required();
  sub->add_option("--range", o.report.range, "NVTX range that marks one iteration (any domain)")->capture_default_str();
  sub->add_option_function<int>("--skip-warmup", [&o](const int& k) { o.report.skip_warmup = k; },
                                "drop the first K iterations (default: those the bench marked warm-up, else the "
                                "first one)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--gap-us", o.report.gap_us, "idle stretches longer than this (microseconds) count as gaps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--top", o.report.top, "rows in the kernel, gap and synchronization tables")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--json", o.json, "also write the numbers as JSON (schema laptime.analyze/1)");
  sub->add_option("--perfetto", o.perfetto, "write the trace as Chrome Trace Event JSON for ui.perfetto.dev");
  sub->add_option("--svg", o.svg, "draw the median steady iteration as an SVG timeline");
  return sub;
}

int run_analyze(const AnalyzeOptions& o) {
  const trace::Trace t = trace::load_nsys_sqlite(o.file);
  const trace::TraceJoin j(t);
  // The Perfetto export needs no iterations: write it even if the analysis cannot run.
  if (!o.perfetto.empty()) trace::write_perfetto(j, o.perfetto);
  trace::require_ranges_left(t);
  const trace::Analysis a = trace::analyze(j, o.report);
  std::printf("laptime analyze %s\n", trace::escape_name(o.file).c_str());
  trace::print_report(a, stdout);
  if (!o.json.empty()) {
    nlohmann::json doc = trace::to_json(a);
    trace::escape_json_strings(doc);
    trace::write_output(o.json, "the JSON report", doc.dump(2) + "\n");
  }
  if (!o.svg.empty()) trace::write_svg(j, a, o.svg);
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"JSON report", o.json},
                                   {"Perfetto trace (open in ui.perfetto.dev)", o.perfetto},
                                   {"SVG timeline", o.svg}})
    if (!path.empty()) std::printf("\nwrote %s: %s", what, trace::escape_name(path).c_str());
  if (!o.json.empty() || !o.perfetto.empty() || !o.svg.empty()) std::printf("\n");
  // The report itself: standard output to a full disk or a closed pipe is a failure too.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw trace::TraceError(std::string("cannot write the report to standard output: ") + std::strerror(errno) + ".");
  return 0;
}

}  // namespace laptime
