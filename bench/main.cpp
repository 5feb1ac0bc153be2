// laptime: bench, forward, analyze, diff and peak subcommands. Every failure is one sentence on stderr and exit 1.
#include <cstdio>

#include "bench/cli.h"
#include "core/check.h"
#include "core/output_file.h"
#include "trace/error.h"

int main(int argc, char** argv) {
  // Before anything is opened: a closed standard output must not become an output's descriptor.
  laptime::reserve_standard_descriptors();
  try {
    const laptime::Command cmd = laptime::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (cmd.kind) {
      case laptime::Command::Kind::Help:
        std::fputs(cmd.help_text.c_str(), stdout);
        return 0;
      case laptime::Command::Kind::Bench:
        return laptime::run_bench(cmd.bench);
      case laptime::Command::Kind::Forward:
        return laptime::run_forward(cmd.forward);
      case laptime::Command::Kind::Analyze:
        return laptime::run_analyze(cmd.analyze);
      case laptime::Command::Kind::Diff:
        return laptime::run_diff(cmd.diff);  // 3 when its --fail-if-slower gate trips
      case laptime::Command::Kind::Peak:
        return laptime::run_peak(cmd.peak);
    }
  } catch (const laptime::Error& e) {
    std::fprintf(stderr, "laptime: %s\n", e.what());
  } catch (const laptime::OutputError& e) {
    std::fprintf(stderr, "laptime: %s\n", e.what());
  } catch (const laptime::trace::TraceError& e) {
    std::fprintf(stderr, "laptime: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laptime: unexpected error: %s\n", e.what());
  }
  return 1;
}
