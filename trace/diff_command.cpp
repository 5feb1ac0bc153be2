#include "trace/diff_command.h"

#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trace/diff_input.h"
#include "trace/diff_json.h"
#include "trace/diff_svg.h"
#include "trace/diff_text.h"
#include "trace/error.h"
#include "trace/nsys_report.h"

namespace laptime {

CLI::App* add_diff_subcommand(CLI::App& app, DiffCommandOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "diff",
      "compare two runs layer by layer: medians, 95% bootstrap interval of the change, and a label per layer.\n"
      "Labels (t = --threshold, a = --min-change-us, relative to BEFORE's median): SLOWER / FASTER when the\n"
      "interval is clear of zero and the change is beyond ±t and ±a; SAME when the interval lies within ±t\n"
      "(or ±a); UNCLEAR otherwise. Exit 3 when --fail-if-slower trips, 1 on an error.");
  sub->add_option("before", o.before, "trace (.nsys-rep, its SQLite export or `laptime bench --trace`) or `bench --json` report")
      ->required();
  sub->add_option("after", o.after, "the same, for the run to compare")->required();
  sub->add_option_function<std::string>(
         "--by", [&o](const std::string& v) { o.diff.by = v == "block" ? trace::LayerKey::Block : trace::LayerKey::Folded; },
         "match layers with block indices folded (layer: h.*.attn, default) or kept (block: h.3.attn)")
      ->check(CLI::IsMember({"layer", "block"}));
  sub->add_option("--peak", o.diff.peak,
                  "ceilings for the roofline columns (`laptime peak`'s file; default: this GPU's cache, if any); the "
                  "columns appear when a side has the bench's layer costs beside it (RUN.layers.json)");
  sub->add_option("--range", o.diff.range,
                  "NVTX ranges that mark the iterations, as analyze's --range: a name, a glob or re:REGEX (default: "
                  "laptime's `forward`, else a family of ranges numbered by iteration)");
  sub->add_option_function<int>("--skip-warmup", [&o](const int& k) { o.diff.skip_warmup = k; },
                                "drop the first K iterations on both sides (default: as analyze decides per side)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--threshold", o.diff.threshold_pct,
                  "percent: the SAME band and the smallest change labelled FASTER/SLOWER")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--min-change-us", o.diff.min_change_us,
                  "microseconds: the smallest absolute change labelled FASTER/SLOWER")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--resamples", o.diff.resamples, "bootstrap resamples per row")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  sub->add_option("--seed", o.diff.seed, "bootstrap seed")->capture_default_str();
  sub->add_option_function<double>("--fail-if-slower", [&o](const double& p) { o.diff.fail_if_slower_pct = p; },
                                    "exit 3 when the iteration or a layer is SLOWER by more than PCT percent "
                                    "(interval clear of zero)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", o.json, "also write the diff as JSON (schema laptime.diff/1)");
  sub->add_option("--svg", o.svg, "draw both median iterations on one time axis, layers joined");
  return sub;
}

int run_diff(const DiffCommandOptions& o) {
  // An .nsys-rep is read through its SQLite export (trace/nsys_report.h); the diff names the user's file.
  auto load = [&o](const std::string& path) {
    const trace::TraceSource source = trace::open_trace_source(path, stderr);
    trace::DiffSide side = trace::load_run(source.path(), o.diff);
    side.file = path;
    return side;
  };
  trace::DiffSide before = load(o.before);
  trace::DiffSide after = load(o.after);
  const trace::Diff d = trace::diff_runs(std::move(before), std::move(after), o.diff);
  std::printf("laptime diff %s %s\n", o.before.c_str(), o.after.c_str());
  trace::print_diff(d, stdout);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f) throw trace::TraceError("cannot write the JSON diff to " + o.json + ".");
    f << trace::diff_to_json(d).dump(2) << "\n";
    std::printf("\nwrote JSON diff: %s\n", o.json.c_str());
  }
  if (!o.svg.empty()) {
    trace::write_diff_svg(d, o.svg);
    std::printf("%swrote SVG diff: %s\n", o.json.empty() ? "\n" : "", o.svg.c_str());
  }
  return d.gate_failed ? kExitGateFailed : 0;
}

}  // namespace laptime
