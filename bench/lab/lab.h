// `laptime lab`: the kernel workbench (docs/KERNELS.md). Each hand-written kernel of the models
// as a ladder of versions (the registry, kernels/lab/registry.h), run side by side:
//
//   laptime lab --list [--json FILE]
//   laptime lab KERNEL [--versions all|none|v1,v3] [--try FILE.cu]... [--shape NAME=V,...]...
//                      [-p fp32|bf16|fp8] [--json FILE] [--html FILE] [--peak FILE] [--seed N] [--target F]
//                      [--timeout S] [--once] [--device N]
//   laptime lab KERNEL --template [FILE]
//   laptime lab --all [--json FILE] [--html FILE] [--peak FILE] [--seed N] [--target F] [--device N]
//
// Per version, first the checks: against the CPU reference (kernels/lab/reference.h) on fresh
// random inputs at every shape, and on zeros and huge values at small shapes that are not a
// multiple of any block or vector; the outputs are poisoned (NaN) before each call and guarded
// on both sides, the bound is the registry's for the precision, and a version that fails one is
// FAILED and never timed. Then, at the models' shapes (or those given), the timing
// (bench/lab/measure.h): cold (the L2 cache flushed before each call) and hot, fresh inputs for
// each call, warm-up, repeats until the 95% interval of the median is within --target of it (the
// stopping rule, printed); the SM clock read through NVML meanwhile (bench/clocks.h) and a note
// where the card throttled; median and interval, GB/s and TFLOP/s from what the call must move,
// % of the DRAM and compute roofs of `laptime peak`'s cached ceilings (GB/s alone without them),
// and the speed-up over the version before, over production and over the ladder's best. Each
// version's timed calls run inside the NVTX ranges lab > KERNEL > lab/KERNEL/vN of the laptime
// domain, so that `ncu --nvtx --nvtx-include 'laptime@lab/KERNEL/'` profiles them and `laptime
// kernels` reads the report by version; --once makes one call a version and shape (what ncu
// wants) and, with --json, writes the layer costs beside it (RUN.layers.json) for `laptime kernels`.
//
// --try FILE.cu: a learner's kernel file (kernels/lab/try_signature.h; --template writes one),
// compiled at run time (kernels/lab/try_compile.h) and run as one more rung, named by the file
// (lab/KERNEL/FILE in NVTX), with the same checks and timing, in a process of its own
// (bench/lab/try_child.h): a compile error is the compiler's messages and exit 1; a fault, a hang
// past --timeout, a bad launch shape or a write outside an output is that rung FAILED with one
// sentence (and the compute-sanitizer command for a fault) while the lab goes on. --once runs the
// files in the lab's own process, for ncu and compute-sanitizer. Without a GPU the files are
// compiled for sm_90a and the run refused in one sentence.
//
// --html writes the report page (trace/write/html_page.h): each shape's ladder with its intervals
// and roofs, drawn from the laptime.lab/1 document --json writes.
//
// --list, --template and every bad argument are answered without a GPU (the registry is host-only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/lab/registry.h"

namespace laptime::lab {

struct LabOptions {
  bool list = false;
  std::string kernel;
  std::string versions = "all";
  std::vector<std::string> shapes;  // --shape texts
  std::string precision;            // "" before resolve: the kernel's first
  std::string json;                 // the report (for --list too); "-" for standard output
  std::string html;                 // the report page, drawn from that JSON
  std::string peak;                 // the ceilings; "": `laptime peak`'s cache for this GPU
  std::optional<uint32_t> seed;     // unset: a fresh one, printed
  double target = 0.01;             // relative half-width of the median's 95% interval
  bool once = false;
  int device = 0;
  std::optional<std::string> template_file;  // --template [FILE]: "" for standard output
  std::string template_text_path;            // what the command line read after --template
  std::vector<std::string> tries;            // --try FILE.cu, each
  double timeout = 5;                        // --timeout: seconds one wait on a learner's kernel may last
  bool all = false;                          // --all: every kernel's first and production versions

  // Filled by resolve_lab_options from the words above.
  std::vector<int> version_indices;
  std::vector<Shape> timed_shapes;  // the model shapes, or the --shape ones
};

// Checks the words against the registry and fills the resolved fields. Throws Error with one
// sentence (unknown kernel, version, precision or dimension; a shape out of bounds). Host-only.
void resolve_lab_options(LabOptions& o);

// Runs the lab (or prints the list, writes a template); returns the exit status: 0, or 1 when a
// version failed (a learner's file that did not compile: 1, after the compiler's messages).
int run_lab(const LabOptions& o);

}  // namespace laptime::lab
