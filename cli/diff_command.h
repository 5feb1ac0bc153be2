// `laptime diff BEFORE AFTER`: the command line around trace/compare/diff.h. Exit codes: 0 done (gate
// passed or not asked), 1 an error (one sentence on stderr), 3 the --fail-if-slower gate tripped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace/compare/diff.h"

namespace CLI {
class App;
}

namespace laptime {

struct DiffCommandOptions {
  std::string before, after;
  trace::DiffOptions diff;
  // The process of each side (a capture of several processes, trace/analyses/processes.h): --pid for
  // both, --pid-before / --pid-after for one.
  std::optional<uint32_t> pid, pid_before, pid_after;
  std::string json;    // schema laptime.diff/1
  std::string svg;     // the two median iterations on one time axis
  std::string html;    // the report page (trace/write/html_page.h): the --json document drawn
  bool quiet = false;  // --quiet: no progress line (trace/model/progress.h)
};

constexpr int kExitGateFailed = 3;

CLI::App* add_diff_subcommand(CLI::App& app, DiffCommandOptions& o);

// Prints the diff to stdout, writes the files asked for; returns 0, or kExitGateFailed when
// the gate trips. Unreadable input throws trace::TraceError with one sentence.
int run_diff(const DiffCommandOptions& o);

}  // namespace laptime
