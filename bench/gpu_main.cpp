// The GPU module's entry (liblaptime_gpu.so, bench/gpu_module.h): `laptime bench`, `forward`
// and `peak` with the full command line, parsed by bench/cli.cpp. The `laptime` executable loads
// this module, and with it the CUDA libraries, only when one of these subcommands runs. Every
// failure is one sentence on stderr and exit 1, as in the executable.
#include <cstdio>

#include "bench/cli.h"
#include "core/check.h"
#include "core/output_file.h"
#include "trace/trace.h"

extern "C" __attribute__((visibility("default"))) int laptime_gpu_main(int argc, char** argv) {
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
      case laptime::Command::Kind::Analyze:  // the executable runs these itself; kept for completeness
        return laptime::run_analyze(cmd.analyze);
      case laptime::Command::Kind::Diff:
        return laptime::run_diff(cmd.diff);
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
