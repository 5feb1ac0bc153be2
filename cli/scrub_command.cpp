#include "cli/scrub_command.h"

#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/help.h"
#include "core/cli_numbers.h"
#include "core/input_file.h"
#include "core/output_file.h"
#include "trace/capture/scrub.h"
#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/read/nsys_export.h"
#include "trace/read/open_trace.h"

namespace laptime {

CLI::App* add_scrub_subcommand(CLI::App& app, ScrubOptions& o) {
  CLI::App* sub = app.add_subcommand("scrub", command_description("scrub"));
  cli::add_input_path(sub, "TRACE", &o.in, "an nsys SQLite export, REPORT.nsys-rep, or a `laptime bench --trace` file")
      ->required();
  cli::add_output_file(sub, "OUT", &o.out, "the scrubbed copy (SQLite)")->required();
  cli::heading(sub, cli::Group::Output);
  cli::add_switch(sub, "--keep-command", &o.keep_command,
                  "keep the captured command's arguments and working folder (by default only the program's base "
                  "name is kept: arguments can hold keys, the folder a user name)");
  sub->footer(
      "The copy keeps the tables laptime reads and, of those, only the columns it reads: kernels, memory "
      "operations, CUDA API calls, synchronizations, CUDA Graph rows, NVTX ranges, thread and GPU names and "
      "the names they point to, the export's product and schema versions. It removes every other table "
      "and column: the environment, host, user and process list, the program's output, the export's "
      "paths, the GPU's identifiers; and of the captured command, its arguments and working folder (the "
      "program's base name stays; --keep-command keeps them). It prints what it kept and what it removed.");
  return sub;
}

namespace {

// What was kept and what was removed, from the result alone.
void print_scrub(const ScrubOptions& o, const trace::ScrubResult& r) {
  using trace::detail::plural;
  using trace::detail::print_wrapped;
  std::printf("laptime scrub %s\n", trace::escape_name(o.in).c_str());
  std::string tables;
  for (const std::string& t : r.tables_kept) tables += (tables.empty() ? "" : ", ") + t;
  print_wrapped(stdout,
                "kept: " + plural(r.tables_kept.size(), "table", "tables") + " laptime reads (" + tables + "), " +
                    plural(r.columns_kept, "column", "columns") + " laptime reads; " + std::to_string(r.strings_kept) +
                    " of " + plural(r.strings_in, "string", "strings") + ", those a kept column names.",
                2);
  std::string command;
  if (!r.command) {
    command = "the trace records no command line.";
  } else {
    const std::string args = plural(r.arguments, "argument", "arguments");
    const std::string folder = r.working_dir ? " and its working folder" : "";
    command =
        r.command_mode == trace::CommandLine::Keep
            ? "kept as recorded (--keep-command): " + trace::escape_name(r.program) + ", its " + args + folder + "."
            : "the program's base name, " + trace::escape_name(r.program) + ", kept; its " + args + folder +
                  " removed (--keep-command keeps them).";
  }
  print_wrapped(stdout, "command: " + command, 2);
  std::string removed = plural(r.tables_in - r.tables_kept.size(), "table", "tables") + " laptime does not read, " +
                        plural(r.columns_dropped, "column", "columns") + " of the kept tables it does not read, " +
                        plural(r.metadata_rows_dropped, "metadata row", "metadata rows") + ", " +
                        plural(r.strings_in - r.strings_kept, "string", "strings") + " no kept column names";
  if (r.environment_rows)
    removed +=
        "; the environment the trace recorded (" + plural(r.environment_rows, "row", "rows") + ") is gone with them";
  print_wrapped(stdout, "removed: " + removed + ".", 2);
}

}  // namespace

int run_scrub(const ScrubOptions& o) {
  if (trace::is_nsys_report(o.out))
    throw trace::TraceError(trace::escape_name(o.out) +
                            ": the scrubbed copy is an SQLite file, not an Nsight Systems "
                            "report: name it .sqlite.");
  const std::string export_of_report = trace::is_nsys_report(o.in) ? trace::export_path_for(o.in) : "";
  std::optional<OutputFile> out;
  cli::open_outputs(out, {{"scrubbed trace", o.out}}, {o.in, export_of_report});
  try {
    check_input(o.in, "a trace", Missing::Allow);
  } catch (const InputError& e) {
    throw trace::TraceError(e.what());
  }
  // What the file is, by its content (trace/read/open_trace.h): scrub copies SQLite traces.
  if (trace::trace_kind(o.in) == trace::TraceKind::Kineto)
    throw trace::TraceError(trace::escape_name(o.in) +
                            " is a PyTorch profiler trace (JSON): laptime scrub copies SQLite traces (Nsight Systems "
                            "exports, laptime's captures) and does not scrub this format.");
  const trace::TraceSource source = trace::open_trace_source(o.in, stderr);
  const trace::ScrubResult r = trace::scrub_trace(
      source.path(), out->temp_path(), o.keep_command ? trace::CommandLine::Keep : trace::CommandLine::BaseName);
  cli::commit(out);
  print_scrub(o, r);
  cli::Ending end;
  end.wrote({{"scrubbed trace", o.out}});
  end.finish();
  return 0;
}

}  // namespace laptime
