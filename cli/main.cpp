// laptime: the trace commands run here, host-only; the GPU commands (cli/commands.h) run in the
// GPU module (cli/gpu_module.h), loaded only for them. Every failure is one sentence on stderr and exit 1.
#include <cstdio>

#include "cli/gpu_module.h"
#include "cli/host_cli.h"
#include "core/output_file.h"
#include "trace/model/error.h"

int main(int argc, char** argv) {
  using namespace laptime;
  // Before anything is opened: a closed standard output must not become an output's descriptor.
  reserve_standard_descriptors();
  return run_command<CommandLineError, OutputError, trace::TraceError>([&] {
    const HostCommand cmd = parse_host_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (cmd.kind) {
      case HostCommand::Kind::Help:
        std::fputs(cmd.help_text.c_str(), stdout);
        return 0;
      case HostCommand::Kind::Analyze:
        return run_analyze(cmd.analyze);
      case HostCommand::Kind::Diff:
        return run_diff(cmd.diff);  // 3 when its --fail-if-slower gate trips
      case HostCommand::Kind::Kernels:
        return run_kernels(cmd.kernels);
      case HostCommand::Kind::Scrub:
        return run_scrub(cmd.scrub);
      case HostCommand::Kind::Gpu:
        break;
    }
    return run_gpu_command(argc, argv);
  });
}
