// `laptime lab KERNEL --try FILE.cu`: the learner's files, compiled and run as rungs beside the
// ladder (bench/lab/lab.h says what the user sees). In order, before the lab's own process
// touches CUDA:
//   1. every file read (one sentence for a file that cannot be), then compiled for this GPU, in
//      one child process (the GPU's architecture is asked there): the compiler's messages, warnings
//      too, printed as it wrote them; a file that did not compile ends the run (exit 1); without a
//      GPU, after the compile, the one-sentence refusal;
//   2. each file run as a rung in a child of its own (bench/lab/try_child.h), from the compile's
//      cache: loaded, checked and timed as any version (bench/lab/run.h); its result comes back as
//      JSON. A fault, a hang past --timeout or a death of the child is that rung FAILED, with the
//      phase it was in and what to run next; the lab goes on.
// With --once the files run in the lab's own process instead (ncu and compute-sanitizer see them
// there), under a watchdog that ends the process on a hang.
#pragma once

#include <string>
#include <vector>

#include "bench/lab/lab.h"
#include "bench/lab/result.h"
#include "core/context.h"

namespace laptime::lab {

struct TryRungs {
  std::vector<VersionResult> rungs;  // in the order of --try
};

// Steps 1 and 2 above for o.tries (nothing with --once, which load_tries_here serves). Throws
// Error with one sentence: a file that cannot be read or did not compile (after its messages),
// no GPU (after the compile), a child that could not be started.
TryRungs run_tries_apart(const LabOptions& o, const KernelInfo& k);

// --once: every file compiled for ctx's GPU and loaded into this process; their version indices.
std::vector<int> load_tries_here(const LabOptions& o, const KernelInfo& k, Context& ctx);

// Where the compiled files are cached: nvrtc/ in laptime's cache folder (trace/read/sidecars.h,
// the one rule, with `laptime peak`'s ceilings).
std::string lab_cache_dir();

// The compute-sanitizer command that reruns `file`'s checks and calls in one process (after a
// fault: it names the faulting line).
std::string sanitizer_command(const LabOptions& o, const std::string& file);

}  // namespace laptime::lab
