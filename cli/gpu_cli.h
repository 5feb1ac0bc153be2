// The GPU module's command line (cli/commands.h's Gpu rows): parsing, host only, tested without a GPU.
#pragma once

#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/lab/lab.h"
#include "bench/peak.h"

namespace laptime {

// A GPU subcommand's line, parsed (the executable parses the trace commands itself and never
// hands them over).
struct Command {
  enum class Kind { Help, Bench, Forward, Peak, Lab } kind = Kind::Help;
  BenchOptions bench;
  ForwardOptions forward;
  PeakOptions peak;
  lab::LabOptions lab;
  std::string help_text;  // for Kind::Help: what --help printed
};

// Parses argv. Throws Error with one sentence for unknown flags or bad values; returns
// Kind::Help with the text when --help was asked for.
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace laptime
