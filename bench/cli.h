// The `laptime` command line: parsing (host only, tested without a GPU) and dispatch.
#pragma once

#include <string>
#include <vector>

#include "bench/workload.h"
#include "core/context.h"
#include "core/nvtx.h"

namespace laptime {

enum class GraphMode { Eager, Graph };

struct BenchOptions {
  WorkloadOptions workload;
  int warmup = 5;
  int iters = 20;
  NvtxLevel nvtx = NvtxLevel::Layer;
  GraphMode graph = GraphMode::Eager;
  StreamKind stream = StreamKind::Created;
  int device = 0;
  std::string json;  // write the report here when set
};

struct ForwardOptions {
  WorkloadOptions workload;
  std::string tokens;  // gpt2: raw int32 [B, T]
  std::string output;  // raw fp32 logits
  int device = 0;
};

struct Command {
  enum class Kind { Help, Bench, Forward } kind = Kind::Help;
  BenchOptions bench;
  ForwardOptions forward;
  std::string help_text;  // for Kind::Help: what --help printed
};

// Parses argv. Throws Error with one sentence for unknown flags or bad values; returns
// Kind::Help with the text when --help was asked for.
Command parse_command_line(const std::vector<std::string>& args);

int run_bench(const BenchOptions& o);
int run_forward(const ForwardOptions& o);

}  // namespace laptime
