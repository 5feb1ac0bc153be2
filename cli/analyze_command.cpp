#include "cli/analyze_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "trace/model/error.h"
#include "trace/analyses/iterations.h"
#include "trace/capture/scrub.h"
#include "trace/write/analysis_json.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sidecars.h"
#include "trace/write/perfetto.h"
#include "trace/analyses/processes.h"
#include "trace/write/roofline.h"
#include "trace/write/timeline_svg.h"
#include "trace/model/text.h"
#include "trace/write/analysis_text.h"
#include "trace/model/format.h"
#include "trace/model/validate.h"

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
  cli::add_integer(sub, "--pid", &o.report.pid, 0, 0xFFFFFF,
                   "report this process only (a capture of several processes, each with its own loop: by default "
                   "each is reported on its own)");
  cli::add_integer(sub, "--skip-warmup", &o.report.skip_warmup, 0, 1000000000,
                   "drop the first K iterations (default: those the bench marked warm-up, else the first one)");
  cli::add_positive_real(sub, "--gap-us", &o.report.gap_us, 1e9,
                         "idle stretches longer than this (microseconds) count as gaps");
  cli::add_integer(sub, "--top", &o.report.top, 0, 1000000,
                   "rows in the kernel, layer, gap and synchronization tables (default 15 in the text, every row in "
                   "the JSON; 0: every row)");
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

namespace {

// One process's report (or the whole trace's, when no process qualifies on its own).
struct Report {
  uint32_t pid = 0;
  trace::Analysis a;
  trace::IterationSteadyState steady;
};

struct Reports {
  std::vector<Report> each;
  // With several processes: the sentence that says so, then those left out (said once, above
  // the sections; with one, the notes go into its report).
  std::vector<std::string> notes;
};

// The processes to report (trace/analyses/processes.h), each analyzed on its own: one with --pid or when
// only one has iterations (its report as it always was), else one per process.
Reports analyze_processes(const trace::TraceJoin& j, const AnalyzeOptions& o) {
  const trace::Trace& t = j.trace();
  trace::ProcessChoice procs = trace::choose_processes(j, o.report.range, o.report.pid);
  const size_t n = procs.reported.size();
  const std::string which = "; the trace holds " + std::to_string(n) + " processes with iterations (" +
                            trace::process_list(t, procs.reported, 6) + "): name one with --pid N.";
  if (n > trace::kMaxProcessesReported) throw trace::TraceError("too many processes to report one by one" + which);
  if (n > 1) {  // one iteration drawn, one run's layer costs: these need the process named
    if (!o.svg.empty()) throw trace::TraceError("--svg draws one process's iteration" + which);
    if (!o.layers.empty() || !o.roofline_svg.empty())
      throw trace::TraceError(std::string(o.layers.empty() ? "--roofline-svg" : "--layers") +
                              " needs one run's layer costs" + which);
  }
  Reports out;
  auto add = [&](uint32_t pid, const trace::IterationSet& set) {
    Report r;
    r.pid = pid;
    r.a = trace::analyze(j, o.report, set);
    r.steady = trace::iteration_steady_state(r.a);
    if (!r.steady.warning.empty()) r.a.notes.push_back(r.steady.warning);
    out.each.push_back(std::move(r));
  };
  if (n == 0) add(0, trace::find_iterations(j, o.report.range));  // the whole trace: its sentence says why
  for (const trace::ProcessIterations& p : procs.reported) {
    try {
      add(p.pid, p.set);
    } catch (const trace::TraceError& e) {
      if (n == 1) throw;
      throw trace::TraceError("process " + trace::process_label(t, p.pid) + ": " + e.what());
    }
  }
  std::vector<std::string>& notes = n > 1 ? out.notes : out.each.front().a.notes;
  if (n > 1) notes.push_back(procs.summary);
  notes.insert(notes.end(), procs.notes.begin(), procs.notes.end());
  return out;
}

// The report as JSON: one process's as it always was (with its pid when --pid chose it), or,
// for several, what they share at the top and each one's own report under "processes", each
// as `--pid N --json` writes it (docs/PROFILING.md).
nlohmann::json report_json(const trace::Trace& t, const Report& r, bool with_pid) {
  nlohmann::json out = trace::to_json(r.a);
  out["steady_state"] = trace::steady_state_json(r.steady);
  if (with_pid) {
    out["pid"] = r.pid;
    out["process"] = trace::process_name(t, r.pid);
  }
  return out;
}

nlohmann::json processes_json(const trace::Trace& t, const Reports& reports) {
  const trace::Analysis& first = reports.each.front().a;
  nlohmann::json out{{"schema", "laptime.analyze/1"}, {"source", first.source}, {"gpu", first.gpu},
                     {"notes", reports.notes}, {"dropped_rows", trace::dropped_json(first.dropped)}};
  nlohmann::json each = nlohmann::json::array();
  for (const Report& r : reports.each) each.push_back(report_json(t, r, true));
  out["processes"] = std::move(each);
  return out;
}

}  // namespace

int run_analyze(const AnalyzeOptions& o) {
  // Every output is checked before the trace is read: none may be the trace itself, a
  // device or a FIFO, or sit in a folder that cannot be written (core/output_file.h).
  std::optional<OutputFile> json_out;
  // An .nsys-rep is read through its SQLite export (trace/read/nsys_export.h): no output onto that either.
  const std::string export_of_report = trace::is_nsys_report(o.file) ? trace::export_path_for(o.file) : "";
  try {
    // Every file the command reads, named or found: the layer costs beside the trace, the peak
    // cache (any GPU's: the trace's is not known yet), the export of a report (not made yet).
    std::vector<std::string> inputs{o.file, o.layers.empty() ? trace::layer_costs_path(o.file) : o.layers, o.peak,
                                    export_of_report};
    for (std::string& cache : trace::peak_cache_files()) inputs.push_back(std::move(cache));
    check_outputs({{"JSON report", o.json, true},
                   {"Perfetto trace", o.perfetto},
                   {"SVG timeline", o.svg},
                   {"roofline SVG", o.roofline_svg}},
                  inputs);
    if (!o.json.empty()) json_out.emplace(OutputSpec{"JSON report", o.json, true}, inputs);
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
  // On the notes stream, like the export's line: the report is the same before and after a scrub.
  if (const std::string note = trace::environment_note(source.path()); !note.empty())
    std::fprintf(stderr, "laptime: %s\n", note.c_str());
  auto t = std::make_unique<const trace::Trace>(trace::load_nsys_sqlite(source.path()));
  auto j = std::make_unique<const trace::TraceJoin>(*t);
  // The Perfetto export needs no iterations: write it even if the analysis cannot run.
  if (!o.perfetto.empty()) trace::write_perfetto(*j, o.perfetto);
  trace::require_ranges_left(*t);
  const Reports reports = analyze_processes(*j, o);
  const size_t n = reports.each.size();
  std::printf("laptime analyze %s\n", trace::escape_name(o.file).c_str());
  if (o.report.pid) std::printf("  process     %s (--pid)\n", trace::process_label(*t, *o.report.pid).c_str());
  for (const std::string& note : reports.notes) {
    std::printf("  note\n");
    trace::detail::print_wrapped(stdout, note, 4);  // names in it are clean (Trace::finalize)
  }
  for (size_t i = 0; i < n; ++i) {
    const Report& r = reports.each[i];
    if (n > 1)
      std::printf("\n=== process %s: %zu of %zu ===\n", trace::process_label(*t, r.pid).c_str(), i + 1, n);
    trace::print_report(r.a, stdout);
    if (!r.steady.text.empty()) std::printf("\nSteady state: %s\n", r.steady.text.c_str());
  }
  // The layer costs describe one run: a roofline for one process only (analyze_processes refused
  // --layers and --roofline-svg for several).
  std::optional<trace::Roofline> roof;
  if (n == 1) roof = trace::roofline_for_trace(*j, reports.each.front().a, o.file, o.layers, o.peak);
  if (roof) trace::print_roofline(*roof, stdout);
  if (!roof && !o.roofline_svg.empty())
    throw trace::TraceError("--roofline-svg needs the layer costs: " + trace::layer_costs_path(o.file) +
                            " is missing; pass --layers FILE, or capture with `laptime bench --trace` or --json.");
  // The JSON report reads the analyses and, of the trace, only its threads' names (the analyses
  // keep the NamePool their Names point into): unless the SVG timeline is still to be drawn, the
  // join and the trace's rows go before it is built, not held under its objects (at 10^6 kernels
  // ~230 MB of rows under ~30 MB of JSON).
  if (json_out && o.svg.empty()) {
    trace::Trace threads;
    threads.thread_names = t->thread_names;
    j.reset();
    t = std::make_unique<const trace::Trace>(std::move(threads));
  }
  if (json_out) {
    try {
      nlohmann::json out = n > 1 ? processes_json(*t, reports) : report_json(*t, reports.each.front(), o.report.pid.has_value());
      if (roof) out["roofline"] = trace::roofline_to_json(*roof);
      trace::escape_json_strings(out);
      json_out->write(out.dump(2) + "\n");
      json_out->commit();
    } catch (const OutputError& e) {
      throw trace::TraceError(e.what());
    }
  }
  if (!o.svg.empty()) trace::write_svg(*j, reports.each.front().a, o.svg);
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
