// How laptime's help reads, for both halves of the command (the executable's parser, cli/host_cli.cpp,
// and the GPU module's, cli/gpu_cli.cpp), so `laptime analyze --help` and `laptime bench --help` look
// alike:
//
//   <the command's description, wrapped>
//
//   Usage: laptime analyze [OPTIONS] TRACE...
//
//   Arguments:
//     TRACE...             ...
//
//   Input:                 (one heading per Group the command uses, in the enum's order)
//     --layers FILE        ...
//
//   Examples:              (the command's row of cli/commands.h)
//     laptime analyze run.nsys-rep
//
// `laptime --help` lists the commands of cli/commands.h's table, the trace commands (every build)
// apart from the GPU ones. Text is wrapped to the terminal's width (help_width()).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace laptime::cli {

// The headings a command's options are listed under, in this order; each command uses those that fit.
enum class Group {
  Input,       // files read besides the arguments (layer costs, ceilings, tokens)
  Selection,   // what is measured: the iterations, the process, how layers are matched
  Thresholds,  // the numbers that decide a label, a gap or a gate
  Model,       // which model, at which shape and precision
  Run,         // how the run goes: iterations, device, stream, graph
  Output,      // files written and how much of the report is shown
  Job,         // the job view: several reports at once
  NcuCommand,  // kernels --command: the ncu command line printed
};
const char* group_title(Group g);

// Every option added to `sub` after this call is listed under `g`'s heading, until the next call:
//
//   cli::heading(sub, cli::Group::Output);
//   cli::add_output_file(sub, "--json", &o.json, "...", true);
//   cli::add_output_file(sub, "--html", &o.html, "...");   // a new flag: one line under its heading
//
// (CLI11's option defaults; `->group(group_title(g))` on one option does the same.)
void heading(CLI::App* sub, Group g);

// Installs laptime's help formatter on `app`. Call it before any subcommand is added: each
// subcommand takes its parent's formatter when it is made.
void use_laptime_help(CLI::App& app);

// The width help is wrapped to: $COLUMNS when it is a number, else the terminal's on standard output,
// else 80 (a pipe, a file, a test), kept within [40, 120] (long lines read badly).
int help_width();

// `text` wrapped to `width` columns: each line after the first indented by `indent` spaces, the
// first by none (the caller has written what comes before it, `first_used` columns). A '\n' in
// `text` starts a new line; a word longer than a line stands alone on its line.
std::string wrap(const std::string& text, size_t width, size_t indent, size_t first_used);

// The sentence a usage error ends with: " Run `laptime CMD --help` for usage." for a command of
// cli/commands.h, " Run `laptime --help` for usage." otherwise.
std::string usage_hint(const std::string& command);

}  // namespace laptime::cli
