// `laptime scrub IN OUT`: a copy of a trace without the capturing machine's environment, host,
// user, the export's paths, program output and device identifiers, which analyze, diff and
// kernels read as they read IN (trace/capture/scrub.h; the captured command line and its working
// folder stay, for kernels). IN is an nsys SQLite export, a laptime trace, or an
// .nsys-rep (read through its export, as analyze reads it); OUT is always SQLite, written through
// core/output_file.h, and may be no file the command reads.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace laptime {

struct ScrubOptions {
  std::string in, out;
};

CLI::App* add_scrub_subcommand(CLI::App& app, ScrubOptions& o);

// Writes OUT and prints one line of what was removed; a trace that cannot be read, or an OUT that
// cannot be written, throws trace::TraceError with one sentence.
int run_scrub(const ScrubOptions& o);

}  // namespace laptime
