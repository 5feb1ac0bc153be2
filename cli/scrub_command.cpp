#include "cli/scrub_command.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/os.h"
#include "core/output_file.h"
#include "trace/capture/scrub.h"
#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/nsys_export.h"

namespace laptime {

CLI::App* add_scrub_subcommand(CLI::App& app, ScrubOptions& o) {
  CLI::App* sub = app.add_subcommand("scrub", command_description("scrub"));
  cli::add_input_path(sub, "TRACE", &o.in, "an nsys SQLite export, REPORT.nsys-rep, or a `laptime bench --trace` file")
      ->required();
  cli::add_output_file(sub, "OUT", &o.out, "the scrubbed copy (SQLite)")->required();
  return sub;
}

int run_scrub(const ScrubOptions& o) {
  if (trace::is_nsys_report(o.out))
    throw trace::TraceError(trace::escape_name(o.out) +
                            ": the scrubbed copy is an SQLite file, not an Nsight Systems "
                            "report: name it .sqlite.");
  const std::string export_of_report = trace::is_nsys_report(o.in) ? trace::export_path_for(o.in) : "";
  try {
    check_input(o.in, "a trace", Missing::Allow);
  } catch (const InputError& e) {
    throw trace::TraceError(e.what());
  }
  try {
    const OutputSpec spec{"scrubbed trace", o.out};
    check_outputs({spec}, {o.in, export_of_report});
    const trace::TraceSource source = trace::open_trace_source(o.in, stderr);
    OutputFile out(spec, {o.in, export_of_report, source.path()});
    const trace::ScrubResult r = trace::scrub_trace(source.path(), out.temp_path());
    out.commit();
    std::printf(
        "laptime scrub: wrote %s: %zu tables kept, %zu dropped, %zu environment rows removed, %zu strings "
        "no kept table names removed\n",
        trace::escape_name(o.out).c_str(), r.tables_kept, r.tables_dropped, r.environment_rows, r.strings_dropped);
  } catch (const OutputError& e) {
    throw trace::TraceError(e.what());
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw trace::TraceError(std::string("cannot write to standard output: ") + std::strerror(errno) + ".");
  return 0;
}

}  // namespace laptime
