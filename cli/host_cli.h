// The `laptime` executable's command line (host only: no CUDA header, no CUDA library). It
// parses the trace subcommands itself (cli/commands.h's Host rows) and recognises the GPU ones by
// their first word only: those go, whole, to the GPU module, whose parser (cli/gpu_cli.cpp) knows
// their options. The top-level help lists both kinds (cli/help.h).
#pragma once

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/diff_command.h"
#include "cli/kernels_command.h"
#include "cli/scrub_command.h"
#include "trace/model/text.h"

namespace CLI {
class App;
}

namespace laptime {

// A usage error: what() is one sentence ending "Run `laptime CMD --help` for usage." (cli/help.h)
class CommandLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HostCommand {
  enum class Kind { Help, Analyze, Diff, Kernels, Scrub, Gpu } kind = Kind::Help;
  AnalyzeOptions analyze;
  DiffCommandOptions diff;
  KernelsOptions kernels;
  ScrubOptions scrub;
  std::string help_text;  // for Kind::Help: what --help printed
};

// Parses argv (without the program name). Kind::Gpu when the first word is a GPU subcommand
// (nothing else is read). Throws CommandLineError for unknown commands, flags or bad values.
HostCommand parse_host_command_line(const std::vector<std::string>& args);

// Parses args into app (its subcommands registered), the same way on both sides: an unknown
// first word is named with the known ones, CLI11's refusals become one sentence ending "Run
// `laptime CMD --help` for usage." (cli/help.h's usage_hint), and --help gives the parsed
// subcommand's help (else the whole program's) in *help. Returns the error sentence, "" when the
// line parsed.
std::string parse_subcommands(CLI::App& app, const std::vector<std::string>& args, std::string* help);

namespace detail {
template <class Command>
int catching(Command& command) {
  return command();
}
template <class First, class... Rest, class Command>
int catching(Command& command) {
  try {
    return catching<Rest...>(command);
  } catch (const First& e) {
    std::fprintf(stderr, "laptime: %s\n", trace::one_line(e.what()).c_str());
    return 1;
  }
}
}  // namespace detail

// Runs command() and returns its exit code. An exception of one of the Sentences types is
// laptime's one sentence, printed "laptime: SENTENCE" on standard error; any other
// std::exception is "laptime: unexpected error: ...". Both exit 1. The one way the executable
// and the GPU module fail (each names its own sentence types).
template <class... Sentences, class Command>
int run_command(Command&& command) {
  try {
    return detail::catching<Sentences...>(command);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laptime: unexpected error: %s\n", trace::one_line(e.what()).c_str());
    return 1;
  }
}

}  // namespace laptime
