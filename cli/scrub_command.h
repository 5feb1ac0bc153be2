// `laptime scrub IN OUT`: a copy of a trace with what laptime reads and nothing else
// (trace/capture/scrub.h says what that is): the tables and columns analyze, diff and kernels read,
// the captured command reduced to the program's base name unless --keep-command. IN is an nsys
// SQLite export, a laptime trace, or an .nsys-rep (read through its export, as analyze reads it);
// OUT is always SQLite, checked and written as every output is (cli/ending.h), and may be no file
// the command reads.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace laptime {

struct ScrubOptions {
  std::string in, out;
  bool keep_command = false;  // --keep-command: the captured command line and working folder as recorded
};

CLI::App* add_scrub_subcommand(CLI::App& app, ScrubOptions& o);

// Writes OUT and prints what was kept and what was removed; a trace that cannot be read, or an
// OUT that cannot be written, throws trace::TraceError with one sentence.
int run_scrub(const ScrubOptions& o);

}  // namespace laptime
