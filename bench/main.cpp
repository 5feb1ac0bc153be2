// laptime: analyze and diff run here, host-only; bench, forward and peak run in the GPU module
// (bench/gpu_module.h), loaded only for them. Every failure is one sentence on stderr and exit 1.
#include <cstdio>

#include "bench/gpu_module.h"
#include "bench/host_cli.h"
#include "core/output_file.h"
#include "trace/error.h"

int main(int argc, char** argv) {
  // Before anything is opened: a closed standard output must not become an output's descriptor.
  laptime::reserve_standard_descriptors();
  try {
    const laptime::HostCommand cmd =
        laptime::parse_host_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (cmd.kind) {
      case laptime::HostCommand::Kind::Help:
        std::fputs(cmd.help_text.c_str(), stdout);
        return 0;
      case laptime::HostCommand::Kind::Analyze:
        return laptime::run_analyze(cmd.analyze);
      case laptime::HostCommand::Kind::Diff:
        return laptime::run_diff(cmd.diff);  // 3 when its --fail-if-slower gate trips
      case laptime::HostCommand::Kind::Gpu:
        return laptime::run_gpu_command(argc, argv);
    }
  } catch (const laptime::CommandLineError& e) {
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
