#include "trace/analyze.h"

#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trace/nsys_sqlite.h"
#include "trace/perfetto.h"
#include "trace/roofline.h"
#include "trace/svg.h"

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
  sub->add_option("--layers", o.layers, "per-layer FLOPs and bytes from the bench (default: FILE's stem + "
                                        ".layers.json, when present): adds the roofline table");
  sub->add_option("--peak", o.peak, "the device's ceilings from `laptime peak` (default: its cache for the trace's GPU)");
  sub->add_option("--roofline-svg", o.roofline_svg, "draw the per-layer roofline (needs the layer costs and ceilings)");
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
  const auto roof = trace::roofline_for_trace(j, a, o.file, o.layers, o.peak);
  if (roof) trace::print_roofline(*roof, stdout);
  if (!roof && !o.roofline_svg.empty())
    throw trace::TraceError("--roofline-svg needs the layer costs: " + trace::layer_costs_path(o.file) +
                            " is missing; pass --layers FILE, or capture with `laptime bench --trace` or --json.");
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f) throw trace::TraceError("cannot write the JSON report to " + o.json + ".");
    nlohmann::json report = trace::to_json(a);
    if (roof) report["roofline"] = trace::roofline_to_json(*roof);
    f << report.dump(2) << "\n";
  }
  if (!o.svg.empty()) trace::write_svg(j, a, o.svg);
  if (roof && !o.roofline_svg.empty()) trace::write_roofline_svg(*roof, o.roofline_svg);
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"JSON report", o.json},
                                   {"Perfetto trace (open in ui.perfetto.dev)", o.perfetto},
                                   {"SVG timeline", o.svg},
                                   {"roofline SVG", o.roofline_svg}})
    if (!path.empty()) std::printf("\nwrote %s: %s", what, path.c_str());
  if (!o.json.empty() || !o.perfetto.empty() || !o.svg.empty() || !o.roofline_svg.empty()) std::printf("\n");
  return 0;
}

}  // namespace laptime
