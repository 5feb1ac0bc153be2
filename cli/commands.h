// The one table of `laptime`'s subcommands, for both halves of the command: the host-only
// executable (the Host rows run there) and the GPU module it loads for the Gpu rows
// (cli/gpu_module.h), which gets the whole command line. Host-only (no CUDA header).
//
// Every list of commands users read comes from this table: `laptime --help`, the unknown-command
// error, the host-only build's refusal of a GPU command (command_list); the lists in README.md and
// docs/ are checked against it by tests/test_commands_lists.cpp.
#pragma once

#include <cstring>
#include <string>

namespace laptime {

// The program's description, at the top of `laptime --help` on both sides (wrapped there).
inline constexpr const char* kLaptimeDescription =
    "laptime: a trace analyzer for any CUDA program's Nsight Systems, PyTorch profiler and Nsight Compute reports "
    "(the lap, the GPU's idle time, the kernels, the syncs; two runs or a whole job compared), and hand-written CUDA "
    "GPT-2 small and ResNet-50 built to be profiled with it.";

// Which half runs a subcommand: the host-only executable itself, or the GPU module it loads.
enum class Side { Host, Gpu };

struct CommandInfo {
  const char* name;
  Side side;
  // Its first line beside its name in `laptime --help`; all of it atop `laptime NAME --help`.
  const char* description;
  const char* examples;  // command lines, one a line, under "Examples:" in `laptime NAME --help`
};

// Every subcommand, in the order `laptime --help` lists them. The executable's parser
// (cli/host_cli.cpp) registers the Host ones with their options and the Gpu ones by name; the
// module's (cli/gpu_cli.cpp) registers the Gpu ones with theirs. Each checks that it has a
// parser for every entry of its side, so a row added here and parsed nowhere fails at once.
inline constexpr CommandInfo kCommands[] = {
    {"bench", Side::Gpu, "loop forward passes and report the steady-state lap time",
     "laptime bench gpt2\n"
     "laptime bench resnet50 -p bf16 --graph --json run.json\n"
     "laptime bench gpt2 --trace run.sqlite\n"
     "nsys profile --trace=cuda,nvtx,osrt -o base laptime bench gpt2"},
    {"forward", Side::Gpu, "run one forward pass on given inputs and write the logits (fp32)",
     "laptime forward gpt2 --tokens tokens.bin -b 1 -t 64 -o logits.bin\n"
     "laptime forward resnet50 --weights resnet50.safetensors --input images.bin -b 8 -o logits.bin"},
    {"analyze", Side::Host,
     "answer the baseline questions from a trace: an nsys report or its SQLite export, a PyTorch profiler trace "
     "(torch.profiler's JSON, gzipped or not), or a `laptime bench --trace` file",
     "laptime analyze run.nsys-rep\n"
     "laptime analyze trace.pt.trace.json.gz\n"
     "laptime analyze run.sqlite --json run.json --svg iteration.svg\n"
     "laptime analyze run.sqlite --range 'Forward Pass Iter *' --skip-warmup 2\n"
     "laptime analyze ranks/ --fail-if-spread 10"},
    {"diff", Side::Host,
     "compare two runs layer by layer: medians, 95% bootstrap interval of the change, and a label per layer\n"
     "Labels (t = --threshold, a = --min-change-us, relative to BEFORE's median): SLOWER / FASTER when the "
     "interval is clear of zero and the change is beyond ±t and ±a; SAME when the interval lies within ±t "
     "(or ±a); UNCLEAR otherwise. Exit 3 when --fail-if-slower trips, 1 on an error.",
     "laptime diff before.nsys-rep after.nsys-rep\n"
     "laptime diff base.sqlite new.sqlite --threshold 3 --fail-if-slower 5\n"
     "laptime diff base.json new.json --json diff.json --svg diff.svg"},
    {"kernels", Side::Host,
     "read an Nsight Compute report per layer: time, DRAM bytes against what the layer must move, speed of light, "
     "occupancy, stalls and a one-line diagnosis; compare two reports; or print the ncu command that makes one",
     "laptime kernels run.ncu-rep\n"
     "laptime kernels before.ncu-rep after.ncu-rep --json kernels.json\n"
     "laptime kernels --command gpt2 -p bf16\n"
     "laptime kernels --command --from run.nsys-rep -- python train.py"},
    {"scrub", Side::Host,
     "copy a trace with the tables and columns analyze, diff and kernels read and nothing else (no environment, "
     "host, user, paths, program output or device identifiers); the captured command reduced to the program's "
     "base name unless --keep-command",
     "laptime scrub run.nsys-rep shared.sqlite"},
    {"peak", Side::Gpu,
     "measure the device's ceilings for the roofline (GEMM per precision, device copy) once, cache and "
     "print them",
     "laptime peak\n"
     "laptime peak --force --device 1"},
    {"lab", Side::Gpu,
     "each hand-written kernel's versions side by side: checked against a CPU reference, timed against the "
     "roofs (--list: the kernels)",
     "laptime lab --list\n"
     "laptime lab layernorm -p bf16 --json lab.json\n"
     "laptime lab layernorm --versions v1,v3 --shape rows=1000,C=771"},
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

// The names of one side's commands in the table's order, as prose: "analyze, diff, kernels and scrub".
inline std::string command_list(Side side) {
  std::string names;
  const char* last = nullptr;
  for (const CommandInfo& c : kCommands) {
    if (c.side != side) continue;
    if (last) names += (names.empty() ? "" : ", ") + std::string(last);
    last = c.name;
  }
  if (!last) return names;
  return names.empty() ? last : names + " and " + last;
}

}  // namespace laptime
