// The GPU module's entry (liblaptime_gpu.so, cli/gpu_module.h): the GPU commands of
// cli/commands.h with the full command line, parsed by cli/gpu_cli.cpp. The `laptime` executable
// loads this module, and with it the CUDA libraries, only when one of these subcommands runs.
// Every failure is one sentence on stderr and exit 1, as in the executable.
#include <cstdio>

#include "cli/gpu_cli.h"
#include "cli/host_cli.h"
#include "core/check.h"
#include "core/output_file.h"
#include "trace/model/error.h"

extern "C" __attribute__((visibility("default"))) int laptime_gpu_main(int argc, char** argv) {
  using namespace laptime;
  return run_command<Error, OutputError, trace::TraceError>([&] {
    const Command cmd = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (cmd.kind) {
      case Command::Kind::Help:
        std::fputs(cmd.help_text.c_str(), stdout);
        return 0;
      case Command::Kind::Bench:
        return run_bench(cmd.bench);
      case Command::Kind::Forward:
        return run_forward(cmd.forward);
      case Command::Kind::Peak:
        return run_peak(cmd.peak);
      case Command::Kind::Lab:
        return lab::run_lab(cmd.lab);
    }
    return 1;
  });
}
