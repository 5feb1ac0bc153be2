// Chooses each GEMM's cuBLASLt algorithm by timing, once per shape, at model build.
//
// cuBLASLt's heuristic ranks algorithms from a model of the GPU; its first pick is usually
// good but not always the fastest for a given shape. The tuner runs the top candidates
// (Gemm::kMaxCandidates) on scratch operands of the real shape (the real weights as B), times
// them as every candidate in laptime is timed (Gemm::autotune, core/timing.h's time_candidate:
// inside a CUDA graph) and keeps the fastest; shapes repeat across a model's blocks (GPT-2
// small: 5 distinct linear shapes for 49 layers), so each is timed once and the choice is
// reused. Build time only: it allocates scratch and synchronizes. Owned by a model; no global
// state.
#pragma once

#include <map>
#include <string>

#include "core/buffer.h"
#include "core/context.h"
#include "layers/gemm.h"

namespace laptime {

class GemmTuner {
 public:
  // Picks gemm's algorithm: from the cache when this shape was timed, else by timing it with
  // A and D on the tuner's scratch and `b`, `bias` the layer's own.
  void tune(const Context& ctx, Gemm& gemm, const void* b, const void* bias);

  double build_ms() const { return build_ms_; }   // wall time spent timing, all shapes
  int shapes_timed() const { return static_cast<int>(cache_.size()); }

 private:
  void* scratch(DeviceBuffer& buf, std::size_t bytes);

  std::map<std::string, cublasLtMatmulAlgo_t> cache_;  // by a description of the spec
  DeviceBuffer a_, d_;
  double build_ms_ = 0;
};

}  // namespace laptime
