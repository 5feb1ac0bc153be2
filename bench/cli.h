// The `laptime` command line: parsing (host only, tested without a GPU) and dispatch.
#pragma once

#include <string>
#include <vector>

#include "trace/analyze.h"
#include "bench/lab/lab.h"
#include "bench/peak.h"
#include "trace/diff_command.h"
#include "trace/kernels_command.h"
#include "bench/workload.h"
#include "core/context.h"
#include "core/nvtx.h"

namespace laptime {

enum class GraphMode { Eager, Graph };

// Deliberate mistakes for learners (and for testing `laptime analyze` on real bad traces),
// each inside every iteration's `forward` range:
//   Sync:     after every layer, copies a value to pinned host memory on the compute stream and
//             waits for that stream, as `t.item()` / Python's `max(t)` do: the host stalls
//   Pageable: copies a small pageable host buffer to the device on the compute stream first
//             (`torch.tensor([...]).cuda()`)
//   Alloc:    cudaMalloc + cudaFree of a scratch buffer first (a caching allocator turned off)
enum class Pitfall { None, Sync, Pageable, Alloc };

struct BenchOptions {
  WorkloadOptions workload;
  int warmup = 5;
  int iters = 20;
  NvtxLevel nvtx = NvtxLevel::Layer;
  GraphMode graph = GraphMode::Eager;
  StreamKind stream = StreamKind::Created;
  int device = 0;
  Pitfall pitfall = Pitfall::None;
  std::string json;  // write the report here when set
  std::string trace;  // capture the run with CUPTI into this file (laptime's nsys-schema SQLite)
};

struct ForwardOptions {
  WorkloadOptions workload;
  std::string tokens;  // gpt2: raw int32 [B, T]
  std::string input;   // resnet50: images, raw fp32 NCHW [B, 3, S, S] (as PyTorch takes them)
  std::string output;  // raw fp32 logits
  std::string calibrate;  // fp8: the calibration batch, same format and shape as the input; empty: the input
  int device = 0;
};

struct Command {
  enum class Kind { Help, Bench, Forward, Analyze, Diff, Kernels, Peak, Lab } kind = Kind::Help;
  BenchOptions bench;
  ForwardOptions forward;
  AnalyzeOptions analyze;
  DiffCommandOptions diff;
  KernelsOptions kernels;
  PeakOptions peak;
  lab::LabOptions lab;
  std::string help_text;  // for Kind::Help: what --help printed
};

// The command-line spelling of a choice, for reports ("sync", "created").
std::string pitfall_name(Pitfall p);
std::string stream_name(StreamKind s);

// Parses argv. Throws Error with one sentence for unknown flags or bad values; returns
// Kind::Help with the text when --help was asked for.
Command parse_command_line(const std::vector<std::string>& args);

int run_bench(const BenchOptions& o);
int run_forward(const ForwardOptions& o);

}  // namespace laptime
