#include "cli/analyze_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/diff_command.h"
#include "cli/ending.h"
#include "cli/help.h"
#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "trace/model/error.h"
#include "trace/analyses/iterations.h"
#include "trace/capture/scrub.h"
#include "trace/write/analysis_json.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
#include "trace/read/sidecars.h"
#include "trace/write/perfetto.h"
#include "trace/model/progress.h"
#include "trace/analyses/per_process.h"
#include "trace/analyses/processes.h"
#include "trace/compare/job.h"
#include "trace/write/roofline.h"
#include "trace/write/timeline_svg.h"
#include "trace/model/text.h"
#include "trace/write/analysis_text.h"
#include "trace/write/html_page.h"
#include "trace/write/job_json.h"
#include "trace/write/job_text.h"
#include "trace/model/format.h"
#include "trace/model/validate.h"

namespace laptime {

CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeOptions& o) {
  CLI::App* sub = app.add_subcommand("analyze", command_description("analyze"));
  // No ExistingFile check: the trace reader says what is wrong with a path in one sentence,
  // including what to do with an .nsys-rep.
  sub->add_option_function<std::vector<std::string>>(
         "TRACE",
         [&o](const std::vector<std::string>& files) {
           for (const std::string& f : files)
             if (f.empty()) throw CLI::ValidationError("file: a file name is empty; give a file.");
           o.files = files;
           o.file = files.front();
         },
         "REPORT.nsys-rep (read through REPORT.sqlite, exported once with nsys when needed), an `nsys export "
         "--type sqlite` output, a PyTorch profiler trace (.json or .json.gz), or laptime's own. Several, a folder or "
         "a glob: the job view, one row per report "
         "(and process), the spread and the straggler (docs/PROFILING.md 8.10)")
      ->type_name("FILE...")
      ->required();
  cli::heading(sub, cli::Group::Selection);
  sub->add_option("--range", o.report.range,
                  "NVTX ranges that mark the iterations, any domain: a name, a glob ('Forward Pass Iter *') or "
                  "re:REGEX, matching whole names (default: laptime's `forward`, else a family of ranges numbered by "
                  "iteration on one thread)")
      ->type_name("PATTERN");
  cli::add_integer(sub, "--pid", &o.report.pid, 0, 0xFFFFFF,
                   "report this process only (a capture of several processes, each with its own loop: by default "
                   "each is reported on its own)");
  cli::add_integer(sub, "--skip-warmup", &o.report.skip_warmup, 0, 1000000000,
                   "drop the first K iterations (default: those the bench marked warm-up, else the first one)");
  cli::heading(sub, cli::Group::Thresholds);
  cli::add_positive_real(sub, "--gap-us", &o.report.gap_us, 1e9,
                         "idle stretches longer than this (microseconds) count as gaps");
  cli::heading(sub, cli::Group::Input);
  cli::add_input_path(sub, "--layers", &o.layers,
                      "per-layer FLOPs and bytes from the bench (default: TRACE's stem + "
                      ".layers.json, when present): adds the roofline table");
  cli::add_input_path(sub, "--peak", &o.peak,
                      "the device's ceilings from `laptime peak` (default: its cache for the trace's GPU)");
  cli::heading(sub, cli::Group::Output);
  cli::add_integer(sub, "--top", &o.report.top, 0, 1000000,
                   "rows in the kernel, layer, gap and synchronization tables (default 15 in the text; in the JSON "
                   "every kernel and layer, and the 1,000 costliest synchronization calls and ranges, the lists that "
                   "grow with the trace, the rest counted; N cuts both; 0: every row)");
  cli::add_output_file(sub, "--json", &o.json,
                       "also write the numbers as JSON (schema laptime.analyze/1; the job view's laptime.job/1); - for "
                       "standard output",
                       true);
  cli::add_output_file(sub, "--html", &o.html,
                       "write the report as one HTML page that opens from disk: the verdict, the median steady "
                       "iteration on a timeline, the sortable tables, the roofline (the job view: the reports, the "
                       "spread, the straggler); its data is the --json document");
  cli::add_output_file(sub, "--perfetto", &o.perfetto,
                       "write the trace as Chrome Trace Event JSON for ui.perfetto.dev (streamed; see --window)");
  sub->add_option("--window", o.window,
                  "what --perfetto exports: auto (default: the whole trace up to 200,000 events, else the steady "
                  "iterations around the median one that fit in that many), all, steady, or iterations N or N-M");
  cli::add_switch(sub, "--quiet", &o.quiet, "no progress line on standard error (it shows only on a terminal)");
  cli::add_output_file(sub, "--svg", &o.svg, "draw the median steady iteration as an SVG timeline");
  cli::add_output_file(sub, "--roofline-svg", &o.roofline_svg,
                       "draw the per-layer roofline (needs the layer costs and ceilings)");
  cli::heading(sub, cli::Group::Job);
  cli::add_switch(sub, "--job", &o.job, "the job view even for one report");
  cli::add_integer(sub, "--workers", &o.workers, 1, 4096,
                   "reports read at once in the job view (default: the machine's cores); memory grows with it");
  cli::add_non_negative_real(sub, "--fail-if-spread", &o.fail_if_spread, 1e6,
                             "exit 3 when the slowest report's lap is more than PCT% above the median report's")
      ->type_name("PCT");
  cli::add_switch(sub, "--list-reports", &o.list_reports,
                  "the reports it would read (each once) and its notes, then stop; with --json, as "
                  "laptime.job.inputs/1 (how laptime.analyze_many fans a job out)");
  cli::add_input_path(sub, "--rows-from", &o.rows_from,
                      "each report's rows from FILE, a JSON array of the documents `laptime analyze --job REPORT "
                      "--json` wrote, one a report in the job's order, instead of reading the reports (how "
                      "laptime.analyze_many puts a job read on many machines together)");
  return sub;
}

namespace {

using Report = trace::ProcessReport;
using Reports = trace::ProcessReports;

// The processes to report (trace/analyses/per_process.h), each analyzed on its own: one with --pid
// or when only one has iterations (its report as it always was), else one per process; what
// draws or costs one run is refused for several, before any analysis.
Reports analyze_processes(const trace::TraceJoin& j, const AnalyzeOptions& o) {
  const trace::ProcessChoice procs = trace::choose_processes(j, o.report.range, o.report.pid);
  if (procs.reported.size() > 1 && procs.reported.size() <= trace::kMaxProcessesReported) {
    const std::string which = trace::several_processes_tail(j.trace(), procs);
    if (!o.svg.empty()) throw trace::TraceError("--svg draws one process's iteration" + which);
    if (!o.layers.empty() || !o.roofline_svg.empty())
      throw trace::TraceError(std::string(o.layers.empty() ? "--roofline-svg" : "--layers") +
                              " needs one run's layer costs" + which);
  }
  return trace::analyze_per_process(j, o.report, procs);
}

// The report as JSON: one process's as it always was (with its pid when --pid chose it), or,
// for several, what they share at the top and each one's own report under "processes", each
// as `--pid N --json` writes it (docs/PROFILING.md).
nlohmann::json report_json(const trace::Trace& t, const Report& r, bool with_pid) {
  nlohmann::json out = trace::to_json(r.a);
  out["settling"] = trace::settling_json(r.settling, r.a);
  if (with_pid) {
    out["pid"] = r.pid;
    out["process"] = trace::process_name(t, r.pid);
  }
  return out;
}

nlohmann::json processes_json(const trace::Trace& t, const Reports& reports) {
  const trace::Analysis& first = reports.each.front().a;
  nlohmann::json out{{"schema", "laptime.analyze/1"},
                     {"source", first.source},
                     {"gpu", first.gpu},
                     {"notes", reports.notes},
                     {"dropped_rows", trace::dropped_json(first.dropped)}};
  nlohmann::json each = nlohmann::json::array();
  for (const Report& r : reports.each) each.push_back(report_json(t, r, true));
  out["processes"] = std::move(each);
  return out;
}

}  // namespace

namespace {

// The page's title: the command as the text report's first line names it.
std::string page_title(const std::vector<std::string>& files) {
  std::string title = "laptime analyze " + files.front();
  if (files.size() > 1) title += " and " + std::to_string(files.size() - 1) + " more";
  return title;
}

// Whether the arguments ask for the job view: several, a folder, a glob laptime expands, --job, or
// one of its steps.
bool is_job(const AnalyzeOptions& o) {
  if (o.job || o.list_reports || !o.rows_from.empty() || o.files.size() > 1) return true;
  std::vector<std::string> notes;
  const std::string& only = o.files.empty() ? o.file : o.files.front();
  const std::vector<std::string> expanded = trace::expand_report_inputs({only}, notes);
  return expanded.size() != 1 || expanded.front() != only;
}

// `laptime analyze A B C ...`: the job view (trace/compare/job.h), its JSON laptime.job/1.
int run_job(const AnalyzeOptions& o) {
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--perfetto", o.perfetto},
                                    {"--window", o.window},
                                    {"--svg", o.svg},
                                    {"--layers", o.layers},
                                    {"--peak", o.peak},
                                    {"--roofline-svg", o.roofline_svg}})
    if (!value.empty())
      throw trace::TraceError(std::string(flag) +
                              " is for one report: the job view takes --json, --html, --range, --pid, "
                              "--skip-warmup, --gap-us, --top, --workers, --fail-if-spread, --list-reports, "
                              "--rows-from and --quiet.");
  trace::Progress progress(o.quiet ? trace::Progress::Mode::Quiet : trace::Progress::Mode::Terminal);
  trace::JobOptions jo;
  jo.report = o.report;
  jo.workers = static_cast<unsigned>(o.workers.value_or(0));
  jo.fail_if_spread_pct = o.fail_if_spread;
  if (o.list_reports && !o.rows_from.empty())
    throw trace::TraceError("--list-reports and --rows-from are two steps of a job read on many machines: give one.");
  if (o.list_reports && !o.html.empty())
    throw trace::TraceError("--list-reports lists the reports a job would read and writes no page: drop --html.");
  std::vector<std::string> notes;
  const std::vector<std::string> files =
      trace::expand_report_inputs(o.files.empty() ? std::vector<std::string>{o.file} : o.files, notes);
  // No output onto any report or the export it is read through.
  std::vector<std::string> inputs = files;
  for (const std::string& f : files)
    if (trace::is_nsys_report(f)) inputs.push_back(trace::export_path_for(f));
  if (!o.rows_from.empty()) inputs.push_back(o.rows_from);
  std::optional<OutputFile> json_out;
  cli::open_outputs(json_out, {{"JSON report", o.json, true}, {"HTML report", o.html}}, inputs);
  if (o.list_reports) {
    std::printf("laptime analyze: %s\n", trace::detail::plural(files.size(), "report", "reports").c_str());
    for (const std::string& f : files) std::printf("  %s\n", trace::escape_name(f).c_str());
    for (const std::string& n : notes) trace::detail::print_wrapped(stdout, "note: " + trace::escape_name(n), 2);
    cli::write_json(json_out, {{"schema", "laptime.job.inputs/1"}, {"files", files}, {"notes", notes}});
    cli::Ending end;
    end.wrote({{"JSON report", o.json}});
    end.finish();
    return 0;
  }
  trace::Job job = o.rows_from.empty() ? trace::analyze_job(files, jo)
                                       : trace::job_from_rows(files, trace::job_rows_from_json(o.rows_from, files), jo);
  job.notes.insert(job.notes.begin(), notes.begin(), notes.end());
  trace::Progress::clear();
  trace::print_job(job, stdout);
  cli::Ending end;
  if (json_out || !o.html.empty()) {
    const std::string document = cli::json_document(trace::job_to_json(job));
    cli::write_document(json_out, document);
    if (!o.html.empty()) trace::write_html(o.html, document, page_title(files));
  }
  end.wrote({{"JSON report", o.json}, {"HTML report", o.html}});
  end.finish();
  return job.gate_failed ? kExitGateFailed : 0;
}

}  // namespace

int run_analyze(const AnalyzeOptions& o) {
  if (is_job(o)) return run_job(o);
  // Every output is checked before the trace is read: none may be the trace itself, a
  // device or a FIFO, or sit in a folder that cannot be written (core/output_file.h).
  // An .nsys-rep is read through its SQLite export (trace/read/nsys_export.h): no output onto that either.
  const std::string export_of_report = trace::is_nsys_report(o.file) ? trace::export_path_for(o.file) : "";
  // Every file the command reads, named or found: the layer costs beside the trace, the peak
  // cache (any GPU's: the trace's is not known yet), the export of a report (not made yet).
  std::vector<std::string> inputs{o.file, o.layers.empty() ? trace::layer_costs_path(o.file) : o.layers, o.peak,
                                  export_of_report};
  for (std::string& cache : trace::peak_cache_files()) inputs.push_back(std::move(cache));
  std::optional<OutputFile> json_out;
  cli::open_outputs(json_out,
                    {{"JSON report", o.json, true},
                     {"Perfetto trace", o.perfetto},
                     {"SVG timeline", o.svg},
                     {"roofline SVG", o.roofline_svg},
                     {"HTML report", o.html}},
                    inputs);
  // Every input, before the trace is read: a FIFO would block its reader forever, a device or
  // a folder is no file of ours (core/input_file.h). A missing trace gets the reader's sentence.
  try {
    check_input(o.file, "a trace", Missing::Allow);
    if (!o.layers.empty())
      check_input(o.layers, "a layer costs file");
    else
      check_input(trace::layer_costs_path(o.file), "a layer costs file", Missing::Allow);
    if (!o.peak.empty()) check_input(o.peak, "a peak file");
  } catch (const InputError& e) {
    throw trace::TraceError(e.what());
  }
  // What the roofline reads besides the trace, read now: a sidecar or a --peak file that is no
  // such file stops the run before the trace is read; --roofline-svg with no sidecar, too.
  trace::RooflineInputs roof_in = trace::read_roofline_inputs(o.file, o.layers, o.peak);
  if (!o.roofline_svg.empty() && !roof_in.costs) throw trace::TraceError(trace::roofline_svg_refusal(roof_in));
  if (!o.window.empty()) {
    if (o.perfetto.empty())
      throw trace::TraceError("--window chooses what --perfetto exports: give --perfetto FILE too.");
    trace::check_perfetto_window_spec(o.window);
  }
  trace::Progress progress(o.quiet ? trace::Progress::Mode::Quiet : trace::Progress::Mode::Terminal);
  trace::Progress::phase("reading the trace");
  const trace::TraceSource source = trace::open_trace_source(o.file, stderr);
  // On the notes stream, like the export's line: the report is the same before and after a scrub.
  if (const std::string note = trace::environment_note(source.path()); !note.empty()) {
    trace::Progress::clear();
    std::fprintf(stderr, "laptime: %s\n", note.c_str());
  }
  auto t = std::make_unique<const trace::Trace>(trace::load_trace(source.path()));
  trace::Progress::phase("joining the GPU work to its launches");
  auto j = std::make_unique<const trace::TraceJoin>(*t);
  // The ceilings of the trace's GPU, now that it is known: --roofline-svg without any stops here.
  trace::add_cached_ceilings(*j, roof_in);
  if (!o.roofline_svg.empty()) {
    if (const std::string why = trace::roofline_svg_refusal(roof_in); !why.empty()) throw trace::TraceError(why);
  }
  trace::require_ranges_left(*t);
  trace::Progress::phase("analyzing the iterations");
  const Reports reports = analyze_processes(*j, o);
  const size_t n = reports.each.size();
  // The layer costs describe one run: a roofline for one process only (analyze_processes refused
  // --layers and --roofline-svg for several).
  std::optional<trace::Roofline> roof;
  if (n == 1) roof = trace::roofline_for_trace(*j, reports.each.front().a, roof_in);
  // Every output that cannot be made is refused here, before a line is printed or a file written.
  if (!o.roofline_svg.empty() && roof) trace::check_roofline_svg(*roof);
  if (!o.svg.empty()) trace::check_svg(reports.each.front().a);
  std::optional<trace::PerfettoWindow> window;
  if (!o.perfetto.empty()) {
    std::vector<const trace::Iterations*> loops;
    for (const Report& r : reports.each) loops.push_back(&r.a);
    window = trace::perfetto_window(*j, loops, o.window.empty() ? "auto" : o.window);
  }
  trace::Progress::clear();
  std::printf("laptime analyze %s\n", trace::escape_name(o.file).c_str());
  if (o.report.pid) std::printf("  process     %s (--pid)\n", trace::process_label(*t, *o.report.pid).c_str());
  for (const std::string& note : reports.notes) {
    std::printf("  note\n");
    trace::detail::print_wrapped(stdout, note, 4);  // names in it are clean (Trace::finalize)
  }
  for (size_t i = 0; i < n; ++i) {
    const Report& r = reports.each[i];
    if (n > 1) std::printf("\n=== process %s: %zu of %zu ===\n", trace::process_label(*t, r.pid).c_str(), i + 1, n);
    trace::print_report(r.a, stdout);
    if (!r.settling.text.empty()) {
      std::printf("\nSettling\n");
      trace::detail::print_wrapped(stdout, r.settling.text, 2);
    }
  }
  if (roof) trace::print_roofline(*roof, stdout);
  std::fflush(stdout);
  // The Perfetto export reads the join and the trace's rows: written before they go.
  if (window) {
    trace::Progress::phase("writing the Perfetto trace");
    trace::write_perfetto(*j, o.perfetto, *window);
    trace::Progress::clear();
  }
  // The JSON report reads the analyses and, of the trace, only its threads' names (the analyses
  // keep the NamePool their Names point into): unless the SVG timeline is still to be drawn, the
  // join and the trace's rows go before it is built, not held under its objects (at 10^6 kernels
  // ~230 MB of rows under ~30 MB of JSON).
  const bool document = json_out || !o.html.empty();
  if (document && o.svg.empty()) {
    trace::Trace threads;
    threads.thread_names = t->thread_names;
    j.reset();
    t = std::make_unique<const trace::Trace>(std::move(threads));
  }
  if (document) {
    trace::Progress::phase("writing the JSON report");
    nlohmann::json out =
        n > 1 ? processes_json(*t, reports) : report_json(*t, reports.each.front(), o.report.pid.has_value());
    if (roof) out["roofline"] = trace::roofline_to_json(*roof);
    const std::string text = cli::json_document(std::move(out));
    cli::write_document(json_out, text);
    if (!o.html.empty()) trace::write_html(o.html, text, page_title({o.file}));
    trace::Progress::clear();
  }
  if (!o.svg.empty()) trace::write_svg(*j, reports.each.front().a, o.svg);
  if (roof && !o.roofline_svg.empty()) trace::write_roofline_svg(*roof, o.roofline_svg);
  cli::Ending end;
  if (window && !window->rule.empty()) std::printf("\nPerfetto trace: %s\n", window->rule.c_str());
  end.wrote({{"JSON report", o.json},
             {"Perfetto trace (open in ui.perfetto.dev)", o.perfetto},
             {"SVG timeline", o.svg},
             {"roofline SVG", o.roofline_svg},
             {"HTML report", o.html}});
  end.finish();
  return 0;
}

}  // namespace laptime
