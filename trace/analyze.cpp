#include "trace/analyze.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "trace/error.h"
#include "trace/iterations.h"
#include "trace/json_report.h"
#include "trace/nsys_report.h"
#include "trace/nsys_sqlite.h"
#include "trace/perfetto.h"
#include "trace/roofline.h"
#include "trace/svg.h"
#include "trace/text.h"
#include "trace/text_report.h"
#include "trace/validate.h"

namespace laptime {

CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "analyze", "answer the baseline questions from a trace: an nsys report or its SQLite export, or a `laptime bench --trace` file");
  // No ExistingFile check: the trace reader says what is wrong with a path in one sentence,
  // including what to do with an .nsys-rep.
  cli::add_input_path(sub, "file", &o.file, "trace: REPORT.nsys-rep (read through REPORT.sqlite, exported once with nsys "
                                             "when needed), an `nsys export --type sqlite` output, or laptime's own")
      ->required();
  sub->add_option("--range", o.report.range,
                  "NVTX ranges that mark the iterations, any domain: a name, a glob ('Forward Pass Iter *') or "
                  "re:REGEX, matching whole names (default: laptime's `forward`, else a family of ranges numbered by "
                  "iteration on one thread)");
  cli::add_integer(sub, "--skip-warmup", &o.report.skip_warmup, 0, 1000000000,
                   "drop the first K iterations (default: those the bench marked warm-up, else the first one)");
  cli::add_positive_real(sub, "--gap-us", &o.report.gap_us, 1e9,
                         "idle stretches longer than this (microseconds) count as gaps");
  cli::add_integer(sub, "--top", &o.report.top, 1, 1000000, "rows in the kernel, gap and synchronization tables");
  cli::add_output_file(sub, "--json", &o.json, "also write the numbers as JSON (schema laptime.analyze/1); - for standard output",
                       true);
  cli::add_output_file(sub, "--perfetto", &o.perfetto, "write the trace as Chrome Trace Event JSON for ui.perfetto.dev");
  cli::add_output_file(sub, "--svg", &o.svg, "draw the median steady iteration as an SVG timeline");
  cli::add_input_path(sub, "--layers", &o.layers, "per-layer FLOPs and bytes from the bench (default: FILE's stem + "
                                                  ".layers.json, when present): adds the roofline table");
  cli::add_input_path(sub, "--peak", &o.peak, "the device's ceilings from `laptime peak` (default: its cache for the trace's GPU)");
  cli::add_output_file(sub, "--roofline-svg", &o.roofline_svg, "draw the per-layer roofline (needs the layer costs and ceilings)");
  return sub;
}

int run_analyze(const AnalyzeOptions& o) {
  // Every output is checked before the trace is read: none may be the trace itself, a
  // device or a FIFO, or sit in a folder that cannot be written (core/output_file.h).
  std::optional<OutputFile> json_out;
  // An .nsys-rep is read through its SQLite export (trace/nsys_report.h): no output onto that either.
  const std::string export_of_report = trace::is_nsys_report(o.file) ? trace::export_path_for(o.file) : "";
  try {
    check_outputs({{"JSON report", o.json, true},
                   {"Perfetto trace", o.perfetto},
                   {"SVG timeline", o.svg},
                   {"roofline SVG", o.roofline_svg}},
                  {o.file, o.layers, o.peak, export_of_report});
    if (!o.json.empty())
      json_out.emplace(OutputSpec{"JSON report", o.json, true},
                       std::vector<std::string>{o.file, o.layers, o.peak, export_of_report});
  } catch (const OutputError& e) {
    throw trace::TraceError(e.what());
  }
  // Every input, before the trace is read: a FIFO would block its reader forever, a device or
  // a folder is no file of ours (core/input_file.h). A missing trace gets the reader's sentence.
  try {
    check_input(o.file, "a trace", Missing::Allow);
    if (!o.layers.empty()) check_input(o.layers, "a layer costs file");
    else check_input(trace::layer_costs_path(o.file), "a layer costs file", Missing::Allow);
    if (!o.peak.empty()) check_input(o.peak, "a peak file");
  } catch (const InputError& e) {
    throw trace::TraceError(e.what());
  }
  const trace::TraceSource source = trace::open_trace_source(o.file, stderr);
  const trace::Trace t = trace::load_nsys_sqlite(source.path());
  const trace::TraceJoin j(t);
  // The Perfetto export needs no iterations: write it even if the analysis cannot run.
  if (!o.perfetto.empty()) trace::write_perfetto(j, o.perfetto);
  trace::require_ranges_left(t);
  trace::Analysis a = trace::analyze(j, o.report);
  const trace::IterationSteadyState steady = trace::iteration_steady_state(a);
  if (!steady.warning.empty()) a.notes.push_back(steady.warning);
  std::printf("laptime analyze %s\n", trace::escape_name(o.file).c_str());
  trace::print_report(a, stdout);
  if (!steady.text.empty()) std::printf("\nSteady state: %s\n", steady.text.c_str());
  const auto roof = trace::roofline_for_trace(j, a, o.file, o.layers, o.peak);
  if (roof) trace::print_roofline(*roof, stdout);
  if (!roof && !o.roofline_svg.empty())
    throw trace::TraceError("--roofline-svg needs the layer costs: " + trace::layer_costs_path(o.file) +
                            " is missing; pass --layers FILE, or capture with `laptime bench --trace` or --json.");
  if (json_out) {
    try {
      nlohmann::json out = trace::to_json(a);
      out["steady_state"] = trace::steady_state_json(steady);
      if (roof) out["roofline"] = trace::roofline_to_json(*roof);
      trace::escape_json_strings(out);
      json_out->write(out.dump(2) + "\n");
      json_out->commit();
    } catch (const OutputError& e) {
      throw trace::TraceError(e.what());
    }
  }
  if (!o.svg.empty()) trace::write_svg(j, a, o.svg);
  if (roof && !o.roofline_svg.empty()) trace::write_roofline_svg(*roof, o.roofline_svg);
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"JSON report", o.json},
                                   {"Perfetto trace (open in ui.perfetto.dev)", o.perfetto},
                                   {"SVG timeline", o.svg},
                                   {"roofline SVG", o.roofline_svg}})
    if (!path.empty() && path != "-") std::printf("\nwrote %s: %s", what, trace::escape_name(path).c_str());
  if ((!o.json.empty() && o.json != "-") || !o.perfetto.empty() || !o.svg.empty() || !o.roofline_svg.empty())
    std::printf("\n");
  // The report itself: standard output to a full disk or a closed pipe is a failure too.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw trace::TraceError(std::string("cannot write the report to standard output: ") + std::strerror(errno) + ".");
  return 0;
}

}  // namespace laptime
