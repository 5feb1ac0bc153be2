// The `laptime` command line: parsing (host only, tested without a GPU) and dispatch.
#pragma once

#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "bench/bench.h"
#include "bench/peak.h"
#include "cli/diff_command.h"
#include "cli/kernels_command.h"

namespace laptime {

struct Command {
  enum class Kind { Help, Bench, Forward, Analyze, Diff, Kernels, Peak } kind = Kind::Help;
  BenchOptions bench;
  ForwardOptions forward;
  AnalyzeOptions analyze;
  DiffCommandOptions diff;
  KernelsOptions kernels;
  PeakOptions peak;
  std::string help_text;  // for Kind::Help: what --help printed
};

// Parses argv. Throws Error with one sentence for unknown flags or bad values; returns
// Kind::Help with the text when --help was asked for.
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace laptime
