// Chooses each GEMM's algorithm by timing, once per shape, at model build.
//
// cuBLASLt's heuristic ranks algorithms from a model of the GPU; its first pick is usually
// good but not always the fastest for a given shape. The tuner runs the top candidates
// (Gemm::kMaxCandidates, then the CUTLASS sm_90a kernels that compute the same product on an
// H100/H200: layers/cutlass/cutlass_gemm.h) on scratch operands of the real shape (the real weights as B), times
// them as every candidate in laptime is timed (Gemm::autotune, core/timing.h's time_candidate:
// inside a CUDA graph) and keeps the fastest; shapes repeat across a model's blocks (GPT-2
// small: 5 distinct linear shapes for 49 layers), so each is timed once and the choice is
// reused. Build time only: it allocates scratch and synchronizes. Owned by a model; no global
// state.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/buffer.h"
#include "core/context.h"
#include "core/env_switches.h"
#include "core/timing.h"
#include "layers/gemm.h"

namespace laptime {

class GemmTuner {
 public:
  // `time_algorithms` false: tune() does nothing and the heuristic's first pick stays; the
  // tuner then only carries fp8's per-shape choices (below), which fp8 always makes.
  explicit GemmTuner(bool time_algorithms = true) : time_algorithms_(time_algorithms) {}
  bool times_algorithms() const { return time_algorithms_; }

  // How the model will run, for the choices between plans whose launch counts differ (fp8 with
  // its quantize pass against bf16). Graph (the default): the GPU's time
  // alone decides, as a replayed CUDA graph pays no launch. Eager: each candidate is charged
  // max(its GPU time, its host enqueue time), since an eager loop whose host is slower than the
  // GPU (batch 1) runs at the host's pace; an extra launch then costs what it costs there. Set
  // before the first prepare() (the owner knows whether it will be captured).
  enum class Replay { Graph, Eager };
  void set_replay(Replay r) { replay_ = r; }
  Replay replay() const { return replay_; }
  // How its candidates are launched while timed: directly in an eager build with
  // LAPTIME_EAGER_TIMING=direct, in a CUDA graph otherwise (core/timing.h).
  static CandidateLaunch launch_for(Replay r) {
    return r == Replay::Eager && env::eager_timing_direct() ? CandidateLaunch::Direct : CandidateLaunch::Graph;
  }
  CandidateLaunch launch() const { return launch_for(replay_); }
  // What a plan line says of how its eager times were taken; "" for Graph.
  static const char* eager_note(Replay r) {
    if (r != Replay::Eager) return "";
    if (under_nsight_compute()) return "eager under Nsight Compute: each time is the GPU's alone (core/timing.h)";
    return launch_for(r) == CandidateLaunch::Direct
               ? "eager: each time is max(GPU, host enqueue), the GPU's timed by direct launches"
               : "eager: each time is max(GPU, host enqueue)";
  }
  // A candidate's time under replay(): core/timing.h's time_candidate, and in Eager also its
  // enqueue_ms, the larger. Negative (why filled) when it refuses. Synchronizes.
  float charge(const Context& ctx, const std::function<bool()>& run, std::string* why = nullptr) const;

  // Picks gemm's algorithm: from the cache when this shape was timed, else by timing it with
  // A and D on the tuner's scratch and `b`, `bias` the layer's own.
  void tune(const Context& ctx, Gemm& gemm, const void* b, const void* bias);

  // fp8 (layers/linear.h): the fp8-or-bf16 choice of one GEMM shape (its key names the shape,
  // epilogue, output type and who quantizes the input), measured once and reused by the
  // identical layers, so that twelve blocks cannot disagree by noise.
  struct Fp8Choice {
    bool fp8 = false;                 // this layer on its own: fp8_ms < bf16_ms (or the policy)
    float fp8_ms = -1, bf16_ms = -1;  // measured; negative when not run. fp8_ms as the layer runs
                                      // alone: its quantize pass included, its output bf16
    // Measured for an owner that chooses two layers together (layers/gpt2/mlp.h), negative when not run:
    float fp8_out8_ms = -1;  // the fp8 GEMM writing e4m3 for its consumer (set_fp8_output)
    float fp8_gemm_ms = -1;  // a layer that quantizes its input: its fp8 GEMM alone, the input e4m3
    std::string note;        // why fp8 was refused, when it was
  };
  const Fp8Choice* fp8_choice(const std::string& key) const {
    const auto it = fp8_choices_.find(key);
    return it == fp8_choices_.end() ? nullptr : &it->second;
  }
  void set_fp8_choice(const std::string& key, const Fp8Choice& c) { fp8_choices_[key] = c; }

  double build_ms() const { return build_ms_; }  // wall time spent timing, all shapes
  int shapes_timed() const { return static_cast<int>(cache_.size()); }

 private:
  void* scratch(DeviceBuffer& buf, std::size_t bytes);

  bool time_algorithms_ = true;
  Replay replay_ = Replay::Graph;
  std::map<std::string, Gemm::Choice> cache_;  // by a description of the spec
  std::map<std::string, Fp8Choice> fp8_choices_;
  DeviceBuffer a_, d_;
  double build_ms_ = 0;
};

}  // namespace laptime
