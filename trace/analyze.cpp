#include "trace/analyze.h"

#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trace/nsys_sqlite.h"
#include "trace/perfetto.h"
#include "trace/svg.h"

namespace laptime {

CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "analyze", "answer the baseline questions from a trace: nsys SQLite export or `laptime bench --trace` file");
  // No ExistingFile check: the trace reader says what is wrong with a path in one sentence,
  // including what to do with an .nsys-rep.
  sub->add_option("file", o.file, "trace: `nsys export --type sqlite REPORT.nsys-rep` output, or laptime's own")
      ->required();
  sub->add_option("--range", o.report.range,
                  "NVTX ranges that mark the iterations, any domain: a name, a glob ('Forward Pass Iter *') or "
                  "re:REGEX, matching whole names (default: laptime's `forward`, else a family of ranges numbered by "
                  "iteration on one thread)");
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
  const trace::Analysis a = trace::analyze(j, o.report);
  std::printf("laptime analyze %s\n", o.file.c_str());
  trace::print_report(a, stdout);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f) throw trace::TraceError("cannot write the JSON report to " + o.json + ".");
    f << trace::to_json(a).dump(2) << "\n";
  }
  if (!o.svg.empty()) trace::write_svg(j, a, o.svg);
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"JSON report", o.json},
                                   {"Perfetto trace (open in ui.perfetto.dev)", o.perfetto},
                                   {"SVG timeline", o.svg}})
    if (!path.empty()) std::printf("\nwrote %s: %s", what, path.c_str());
  if (!o.json.empty() || !o.perfetto.empty() || !o.svg.empty()) std::printf("\n");
  return 0;
}

}  // namespace laptime
