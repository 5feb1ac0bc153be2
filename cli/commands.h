// The subcommands that need the CUDA build: they run the models on a GPU. The `laptime`
// executable lists them in its help and hands them, whole command line and all, to the GPU
// module (cli/gpu_module.h); the module's parser (cli/gpu_cli.cpp) registers them with these
// same one-line descriptions. Host-only (no CUDA header), for both sides.
#pragma once

#include <cstring>
#include <string>

namespace laptime {

// The program's one-line description, at the top of `laptime --help` on both sides.
inline constexpr const char* kLaptimeDescription =
    "laptime: hand-written CUDA GPT-2 small and ResNet-50, built to be profiled.";

struct GpuCommand {
  const char* name;
  const char* description;
};

inline constexpr GpuCommand kGpuCommands[] = {
    {"bench", "loop forward passes and report the steady-state lap time"},
    {"forward", "run one forward pass on given inputs and write the logits (fp32)"},
    {"peak", "measure the device's ceilings for the roofline (GEMM per precision, device copy) once, cache and "
             "print them"},
};

// The description of a GPU subcommand, "" for any other word.
inline const char* gpu_command_description(const std::string& name) {
  for (const GpuCommand& c : kGpuCommands)
    if (name == c.name) return c.description;
  return "";
}

inline bool is_gpu_command(const std::string& word) { return *gpu_command_description(word) != '\0'; }

}  // namespace laptime
