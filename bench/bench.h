// `laptime bench` and `laptime forward`: what each run takes (filled by the command line,
// cli/gpu_cli.cpp, or by a test) and the functions that run it. The run fills a BenchResult
// (bench/bench_result.h); the writers there only present it.
#pragma once

#include <map>
#include <string>

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
  std::string json;    // write the report here when set
  std::string trace;   // capture the run with CUPTI into this file (laptime's nsys-schema SQLite)
  std::string output;  // the last lap's logits, raw fp32 as `laptime forward` writes them, when set
};

struct ForwardOptions {
  WorkloadOptions workload;
  std::string tokens;     // gpt2: raw int32 [B, T]
  std::string input;      // resnet50: images, raw fp32 NCHW [B, 3, S, S] (as PyTorch takes them)
  std::string output;     // raw fp32 logits
  std::string calibrate;  // fp8: the calibration batch, same format and shape as the input; empty: the input
  int device = 0;
};

// The command-line spelling of each choice: the parser accepts these words, the reports print
// them ("sync", "created").
inline const std::map<std::string, Pitfall>& pitfall_words() {
  static const std::map<std::string, Pitfall> words{
      {"none", Pitfall::None}, {"sync", Pitfall::Sync}, {"pageable", Pitfall::Pageable}, {"alloc", Pitfall::Alloc}};
  return words;
}
inline const std::map<std::string, StreamKind>& stream_words() {
  static const std::map<std::string, StreamKind> words{{"created", StreamKind::Created},
                                                       {"default", StreamKind::Legacy}};
  return words;
}
template <class Enum>
std::string word_for(const std::map<std::string, Enum>& words, Enum value) {
  for (const auto& [word, v] : words)
    if (v == value) return word;
  return "?";
}
inline std::string pitfall_name(Pitfall p) { return word_for(pitfall_words(), p); }
inline std::string stream_name(StreamKind s) { return word_for(stream_words(), s); }

int run_bench(const BenchOptions& o);
int run_forward(const ForwardOptions& o);

}  // namespace laptime
