// The one table of `laptime`'s subcommands, for both halves of the command: the host-only
// executable (analyze, diff, kernels run there) and the GPU module it loads for the rest
// (cli/gpu_module.h), which gets the whole command line. Host-only (no CUDA header).
#pragma once

#include <cstring>
#include <string>

namespace laptime {

// The program's one-line description, at the top of `laptime --help` on both sides.
inline constexpr const char* kLaptimeDescription =
    "laptime: a trace analyzer for any CUDA program's Nsight Systems and Nsight Compute reports (the lap, the GPU's\n"
    "idle time, the kernels, the syncs; two runs or a whole job compared), and hand-written CUDA GPT-2 small and\n"
    "ResNet-50 built to be profiled with it.";

// Which half runs a subcommand: the host-only executable itself, or the GPU module it loads.
enum class Side { Host, Gpu };

struct CommandInfo {
  const char* name;
  Side side;
  const char* description;  // the line under its name in `laptime --help`
};

// Every subcommand, in the order `laptime --help` lists them. The executable's parser
// (cli/host_cli.cpp) registers the Host ones with their options and the Gpu ones by name; the
// module's (cli/gpu_cli.cpp) registers the Gpu ones with theirs. Each checks that it has a
// parser for every entry of its side, so a row added here and parsed nowhere fails at once.
inline constexpr CommandInfo kCommands[] = {
    {"bench", Side::Gpu, "loop forward passes and report the steady-state lap time"},
    {"forward", Side::Gpu, "run one forward pass on given inputs and write the logits (fp32)"},
    {"analyze", Side::Host,
     "answer the baseline questions from a trace: an nsys report or its SQLite export, or a `laptime bench --trace` "
     "file"},
    {"diff", Side::Host,
     "compare two runs layer by layer: medians, 95% bootstrap interval of the change, and a label per layer.\n"
     "Labels (t = --threshold, a = --min-change-us, relative to BEFORE's median): SLOWER / FASTER when the\n"
     "interval is clear of zero and the change is beyond ±t and ±a; SAME when the interval lies within ±t\n"
     "(or ±a); UNCLEAR otherwise. Exit 3 when --fail-if-slower trips, 1 on an error."},
    {"kernels", Side::Host,
     "read an Nsight Compute report per layer: time, DRAM bytes against what the layer must move, speed of light,\n"
     "occupancy, stalls and a one-line diagnosis; compare two reports; or print the ncu command that makes one"},
    {"scrub", Side::Host,
     "copy a trace with the tables and columns analyze, diff and kernels read and nothing else (no environment, "
     "host, user, paths, program output or device identifiers); the captured command reduced to the program's "
     "base name unless --keep-command"},
    {"peak", Side::Gpu,
     "measure the device's ceilings for the roofline (GEMM per precision, device copy) once, cache and "
     "print them"},
    {"lab", Side::Gpu,
     "each hand-written kernel's versions side by side: checked against a CPU reference, timed against the "
     "roofs (--list: the kernels)"},
};

// The table's row for `name`, nullptr for a word that is no subcommand.
inline const CommandInfo* find_command(const std::string& name) {
  for (const CommandInfo& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

inline const char* command_description(const std::string& name) {
  const CommandInfo* c = find_command(name);
  return c ? c->description : "";
}

inline bool is_gpu_command(const std::string& word) {
  const CommandInfo* c = find_command(word);
  return c && c->side == Side::Gpu;
}

}  // namespace laptime
