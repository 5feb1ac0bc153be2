// How the `laptime` executable runs a GPU subcommand (cli/commands.h) without loading
// any CUDA library before one is asked for: the CUDA build puts those subcommands, the models
// and everything they link (cudart, cuBLASLt, cuDNN, CUPTI) into a module beside the
// executable, liblaptime_gpu.so, which is opened with dlopen only then. `laptime --help`,
// `analyze` and `diff` never map it (about 250 MB resident when the executable linked it).
// In the host-only build (LAPTIME_CUDA=OFF) there is no module and these subcommands say so.
#pragma once

namespace laptime {

// Runs argv[1] (a GPU subcommand) with the whole command line; returns its exit code.
// Throws CommandLineError (cli/host_cli.h) with one sentence when the module cannot be
// loaded, or in the host-only build.
int run_gpu_command(int argc, char** argv);

}  // namespace laptime
