// `laptime kernels --command gpt2|resnet50`: the Nsight Compute command line that profiles one
// forward pass of laptime's bench, and roughly how long it runs.
//
// Why one forward, and why so long: ncu serializes the kernels and replays each one many times
// (21 passes with the sections below on an H200), collecting a few counters a pass, with the
// caches flushed and the clocks locked to base before each; between passes it saves and
// restores all the device memory the kernel can reach. So a kernel that runs 10 us takes most
// of a second to profile, the times it reports are per kernel (not the lap, which overlaps
// nothing here but pays launch gaps there), and one forward is the whole capture. laptime's
// first forward runs the same kernels as a steady one (every plan and workspace is made in
// prepare(), before it: docs/DESIGN-NOTES.md), so `-w 0 -n 1` profiles a steady iteration; a
// program whose first iteration differs (PyTorch's lazy init, cuDNN autotuning) is filtered on
// a later one by name ("Forward Pass Iter 2/").
//
// The estimate is what the committed H200 captures measured (tests/fixtures/ncu/capture.log):
// the program's own start, then seconds per kernel at that shape, times the kernels counted in
// those reports. Only the command's spelling of laptime's CLI and these counts are model facts
// here: trace/ runs nothing.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace laptime::trace {

// The sections `laptime kernels` reads (trace/ncu/ncu_csv.h says which metric each one gives).
const std::vector<std::string>& ncu_sections();

// Seconds ncu takes per profiled kernel with those sections, as the committed H200 captures
// measured it (GPT-2 B=1 T=256, 0.40 GB reachable per kernel): the handoff's estimate for any program.
double ncu_seconds_per_kernel();

struct NcuCommandOptions {
  std::string model;                   // gpt2 or resnet50, or lab (laptime lab's versions of one kernel)
  std::string lab_kernel;              // lab: the kernel (`laptime lab --list`)
  std::vector<std::string> lab_tries;  // lab: --try FILE.cu, each: a learner's file as one more rung (lab/KERNEL/FILE)
  std::string binary = "./build/bench/laptime";
  std::optional<int> batch, seq, image_size;
  std::string precision, attention, stem;  // passed to the bench as given; empty: its defaults
  std::string within;                      // profile only this range inside `forward` (h.0, conv1)
  std::string output;                      // the files' stem; empty: model and shape (gpt2_b1_t256)
  bool csv = false;                        // --csv --page raw to a file instead of a .ncu-rep
};

struct NcuCommand {
  std::string what = "one forward pass";  // what it profiles, for the heading
  std::string ncu;                        // the ncu command line
  std::string read;                       // the laptime kernels command that reads its result
  std::string output;                     // the report file it writes
  std::string costs;                      // the layer costs file the bench writes beside it
  int kernels = 0;     // the kernels it will profile (as counted in the committed reports); 0: not known here (lab)
  double seconds = 0;  // the estimate
  std::vector<std::string> notes;  // what the estimate rests on, and why the command is so
};

// Throws TraceError for a model other than gpt2, resnet50 and lab, or a shape flag of the other
// model (of any model, for lab). For lab: `laptime lab KERNEL --once` under ncu, filtered on its
// ranges (lab > KERNEL > lab/KERNEL/vN, bench/lab/lab.h), the layer costs written beside it.
NcuCommand ncu_command(const NcuCommandOptions& o);
void print_ncu_command(const NcuCommand& c, std::FILE* out);

}  // namespace laptime::trace
