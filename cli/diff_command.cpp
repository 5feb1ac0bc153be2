#include "cli/diff_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/help.h"
#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "trace/model/progress.h"
#include "trace/compare/diff_input.h"
#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/nsys_export.h"
#include "trace/read/open_trace.h"
#include "trace/read/sidecars.h"
#include "trace/write/diff_json.h"
#include "trace/write/diff_svg.h"
#include "trace/write/diff_text.h"
#include "trace/write/html_page.h"

namespace laptime {

CLI::App* add_diff_subcommand(CLI::App& app, DiffCommandOptions& o) {
  CLI::App* sub = app.add_subcommand("diff", command_description("diff"));
  cli::add_input_path(sub, "BEFORE", &o.before,
                      "trace (.nsys-rep, its SQLite export, a PyTorch profiler trace or `laptime bench --trace`) or "
                      "`bench --json` report")
      ->required();
  cli::add_input_path(sub, "AFTER", &o.after, "the same, for the run to compare")->required();
  cli::heading(sub, cli::Group::Selection);
  sub->add_option_function<std::string>(
         "--by",
         [&o](const std::string& v) { o.diff.by = v == "block" ? trace::LayerKey::Block : trace::LayerKey::Folded; },
         "match layers with block indices folded (layer: h.*.attn, default) or kept (block: h.3.attn)")
      ->check(CLI::IsMember({"layer", "block"}));
  sub->add_option("--range", o.diff.range,
                  "NVTX ranges that mark the iterations, as analyze's --range: a name, a glob or re:REGEX (default: "
                  "laptime's `forward`, else a family of ranges numbered by iteration)")
      ->type_name("PATTERN");
  CLI::Option* pid = cli::add_integer(sub, "--pid", &o.pid, 0, 0xFFFFFF,
                                      "compare this process on both sides (captures of several processes, each with "
                                      "its own loop, are refused without it)");
  cli::add_integer(sub, "--pid-before", &o.pid_before, 0, 0xFFFFFF, "the process of BEFORE to compare")->excludes(pid);
  cli::add_integer(sub, "--pid-after", &o.pid_after, 0, 0xFFFFFF, "the process of AFTER to compare")->excludes(pid);
  // Every number through core/cli_numbers, as analyze's: CLI11's own checks let "nan" through
  // (--fail-if-slower nan passed a 10% regression) and answer "inf" with a 300-digit bound.
  cli::add_integer(sub, "--skip-warmup", &o.diff.skip_warmup, 0, 1000000000,
                   "drop the first K iterations on both sides (default: as analyze decides per side)");
  cli::heading(sub, cli::Group::Thresholds);
  cli::add_positive_real(sub, "--threshold", &o.diff.threshold_pct, 1e6,
                         "percent: the SAME band and the smallest change labelled FASTER/SLOWER")
      ->type_name("PCT");
  cli::add_non_negative_real(sub, "--min-change-us", &o.diff.min_change_us, 1e9,
                             "microseconds: the smallest absolute change labelled FASTER/SLOWER");
  cli::add_integer(sub, "--resamples", &o.diff.resamples, 100, 1000000, "bootstrap resamples per row");
  cli::add_integer(sub, "--seed", &o.diff.seed, 0, std::numeric_limits<int64_t>::max(), "bootstrap seed");
  cli::add_non_negative_real(sub, "--fail-if-slower", &o.diff.fail_if_slower_pct, 1e6,
                             "exit 3 when the iteration or a layer is SLOWER by more than PCT percent (interval "
                             "clear of zero)")
      ->type_name("PCT");
  cli::heading(sub, cli::Group::Input);
  cli::add_input_path(sub, "--peak", &o.diff.peak,
                      "ceilings for the roofline columns (`laptime peak`'s file; default: this GPU's cache, if any); "
                      "the columns appear when a side has the bench's layer costs beside it (RUN.layers.json)");
  cli::heading(sub, cli::Group::Output);
  cli::add_integer(sub, "--top", &o.diff.top, 0, 1000000,
                   "layer rows shown, largest change first (default 15 in the text, every row in the JSON; 0: every "
                   "row); the verdict and the gate count every layer");
  cli::add_output_file(sub, "--json", &o.json,
                       "also write the diff as JSON (schema laptime.diff/1); - for standard output", true);
  cli::add_output_file(sub, "--svg", &o.svg,
                       "draw both median iterations on one time axis, layers joined, SLOWER/FASTER ones marked");
  cli::add_output_file(sub, "--html", &o.html,
                       "write the diff as one HTML page that opens from disk: both laps, each layer's change with "
                       "its 95% interval drawn; its data is the --json document");
  cli::add_switch(sub, "--quiet", &o.quiet, "no progress line on standard error (it shows only on a terminal)");
  return sub;
}

int run_diff(const DiffCommandOptions& o) {
  // Every output and input before either run is read: no output onto an input (the trace was
  // replaced by the JSON before), none on a device or FIFO, two outputs on one name refused;
  // inputs and their layer costs files that are FIFOs, folders or devices refused (a FIFO
  // blocked forever).
  std::vector<std::string> inputs{o.before, o.after, trace::layer_costs_path(o.before),
                                  trace::layer_costs_path(o.after), o.diff.peak};
  for (const std::string& run : {o.before, o.after})  // the SQLite export read for a report
    if (trace::is_nsys_report(run)) inputs.push_back(trace::export_path_for(run));
  for (std::string& cache : trace::peak_cache_files()) inputs.push_back(std::move(cache));  // read for the GPU
  std::optional<OutputFile> json_out;
  cli::open_outputs(json_out, {{"JSON diff", o.json, true}, {"SVG diff", o.svg}, {"HTML diff", o.html}}, inputs);
  try {
    for (const std::string& run : {o.before, o.after})
      if (!check_input(run, "a trace or a bench report", Missing::Allow))
        throw trace::TraceError("cannot open " + run + ": no such file, or not readable.");
    for (const std::string& run : {o.before, o.after}) trace::check_layer_costs_beside(run);
    if (!o.diff.peak.empty()) check_input(o.diff.peak, "a peak file");
  } catch (const InputError& e) {
    throw trace::TraceError(e.what());
  }
  trace::Progress progress(o.quiet ? trace::Progress::Mode::Quiet : trace::Progress::Mode::Terminal);
  // An .nsys-rep is read through its SQLite export (trace/read/nsys_export.h); the diff names the user's file.
  auto load = [&o](const std::string& path, std::optional<uint32_t> pid) {
    trace::Progress::phase("reading " + path);
    const trace::TraceSource source = trace::open_trace_source(path, stderr);
    trace::DiffSide side = trace::load_run(source.path(), o.diff, pid);
    side.file = path;
    return side;
  };
  trace::DiffSide before = load(o.before, o.pid ? o.pid : o.pid_before);
  trace::DiffSide after = load(o.after, o.pid ? o.pid : o.pid_after);
  trace::Progress::phase("comparing the layers");
  const trace::Diff d = trace::diff_runs(std::move(before), std::move(after), o.diff);
  if (!o.svg.empty()) trace::check_diff_svg(d);  // a run that cannot draw it prints and writes nothing
  trace::Progress::clear();
  std::printf("laptime diff %s %s\n", trace::escape_name(o.before).c_str(), trace::escape_name(o.after).c_str());
  trace::print_diff(d, stdout);
  // With `--json -` standard output stays pointed at standard error until json_out goes out of
  // scope, so nothing printed below lands after the JSON.
  cli::Ending end;
  if (json_out || !o.html.empty()) {
    const std::string document = cli::json_document(trace::diff_to_json(d));
    cli::write_document(json_out, document);
    end.wrote({{"JSON diff", o.json}});
    if (!o.html.empty()) trace::write_html(o.html, document, "laptime diff " + o.before + " " + o.after);
  }
  if (!o.svg.empty()) trace::write_diff_svg(d, o.svg);
  end.wrote({{"SVG diff", o.svg}, {"HTML diff", o.html}});
  end.finish();
  return d.gate_failed ? kExitGateFailed : 0;
}

}  // namespace laptime
