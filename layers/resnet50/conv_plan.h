// How a convolution runs: the plans of one input shape and the measured choice between them,
// apart from the layer that owns the weights (layers/resnet50/conv2d.h). Conv2d describes what it is
// (ConvProblem) and hands over the buffers of its forward; this file builds the candidates,
// times them, keeps the fastest and shares it between identical layers (ConvPlanCache).
//
// Candidates. One cuDNN graph per route, described with explicit dims and NHWC strides: conv_fprop
// → add bias → [add residual] → [ReLU], fp32 in between and fp32 accumulation, the storage type at
// both ends (ConvRoute::Fused); or the convolution alone, followed by our conv_epilogue kernel
// (Separate). For each, cuDNN's heuristics A and B plus its fallback list, deduplicated by name,
// each passing the precision's filter below, built until a cap and a host-time budget; and for a
// 1×1 stride-1 convolution cuBLASLt's first few algorithms for the GEMM y[N·H·W, out] =
// x[N·H·W, in] · Wᵀ with bias, residual and ReLU in its epilogue (Gemm).
//
// Choice by measurement (ConvRoute::Auto): every candidate runs on the forward's own buffers on
// the context's stream and is timed with time_candidate (core/timing.h: inside a CUDA graph, the
// GPU's time alone, where direct runs would rank small convolutions by host overhead); the
// fastest is kept. LAPTIME_CONV_TUNE=off restores the untimed choice (cuDNN's first supported
// fused plan, else the first separate one), for comparison; LAPTIME_CUDNN_DESELECT_ENGINES leaves
// engines out of every plan (core/env_switches.h). A ConvPlanCache shared by a model's layers
// makes that once per distinct shape: the weights are bound at run time, not in the plan.
//
// fp8 (layers/resnet50/conv2d.h says which convolutions have the candidate): choose_fp8_conv times the
// e4m3 GEMM with its quantize pass against the plan chosen above, by the same method.
//
// Precision: fp32 is strict, no TF32 — engines that cuDNN notes as using tensor cores are
// excluded (on fp32 data a tensor core means TF32), and cuBLASLt computes in CUBLAS_COMPUTE_32F;
// tf32 allows them; bf16 uses them. No precision accepts an engine that down-converts its inputs
// (fp32 to fp16, say).
//
// cudnn-frontend's headers are heavy: conv_plan.cpp includes them, this header does not.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/context.h"
#include "core/dtype.h"
#include "kernels/conv_epilogue.cuh"
#include "layers/fp8_weight.h"
#include "layers/gemm.h"
#include "layers/gemm_tuner.h"

namespace laptime {

// A square-kernel 2-D convolution's geometry (dilation 1, one group: all ResNet-50 uses).
struct ConvShape {
  int in_channels = 0;
  int out_channels = 0;
  int kernel = 1;  // kh = kw
  int stride = 1;
  int pad = 0;
  int out_size(int in) const { return (in + 2 * pad - kernel) / stride + 1; }
  int64_t weight_count() const { return int64_t{out_channels} * kernel * kernel * in_channels; }
};

// The route (see the top of this file).
//   Auto:     the fastest candidate of every route this shape allows, measured in prepare().
//   Fused:    one cuDNN graph, conv → bias → [residual] → [ReLU]; prepare() throws when cuDNN cannot run it.
//   Separate: a cuDNN graph of the convolution alone, then conv_epilogue_forward.
//   Gemm:     cuBLASLt, bias, residual and ReLU in its epilogue; 1×1 stride-1 unpadded only.
enum class ConvRoute { Auto, Fused, Separate, Gemm };
const char* conv_route_name(ConvRoute r);

// What a convolution layer is, as its plans see it: one layer's, its weights on the device.
struct ConvProblem {
  ConvShape shape;
  DType dtype = DType::F32;  // storage of x, w, bias, residual and y
  Precision precision = Precision::FP32;
  ConvActivation act = ConvActivation::None;
  const void* weight = nullptr;  // [out, k, k, in] (KRSC, folded)
  const void* bias = nullptr;    // [out]
  bool gemm_shape() const { return shape.kernel == 1 && shape.stride == 1 && shape.pad == 0; }
};

// Everything one input shape needs: built in prepare(), read-only in forward(). Shared, through
// a ConvPlanCache, by identical convolutions: nothing in it names a layer's weights.
struct ConvPlan {
  ConvPlan();
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  // Enqueues the route on ctx's stream with `c`'s weights: the graph (then for Separate the
  // epilogue kernel), or the GEMM. forward() and the trial runs share it. False, with cuDNN's
  // words in *why, when cuDNN refuses. Host cost per cuDNN call: a few µs, no allocation of ours
  // (the pointers go in a stack array in uid order, patched into the variant pack made at build).
  bool enqueue(const ConvProblem& c, const Context& ctx, void* y, const void* x, const void* residual,
               std::string* why) const;

  struct Graph;                    // cudnn-frontend's graph and its chosen plan (conv_plan.cpp)
  cudnnHandle_t handle = nullptr;  // ctx.cudnn() of the preparing context, bound to `stream`
  cudaStream_t stream = nullptr;
  ConvRoute route = ConvRoute::Separate;
  std::unique_ptr<Graph> graph;  // Fused, Separate: its candidate plans built
  std::unique_ptr<Gemm> gemm;    // Gemm: the chosen algorithm
  bool residual = false;         // prepared with a residual (forward must agree)
  int64_t workspace = 0;         // bytes, reserved on the context
  std::string engine;            // cuDNN's name for the plan (engine and knobs), or cuBLASLt's algorithm
  std::string note;              // what was refused on the way, if anything
  int64_t out_rows = 0;          // N·Ho·Wo, the epilogue's rows
  float ms = -1.f;               // measured at prepare (negative: not timed)
  int candidates = 0;            // how many were timed for this shape, all routes
  int finalists = 0;             // how many were timed again in the final round (0: none)
};

// Plans shared between the convolutions of one model: one per distinct (shape, input size,
// storage type, precision, activation, residual, route, stream), by conv_plan_key. Also the
// build's account: how many plans were built and reused, candidates timed, seconds spent.
class ConvPlanCache {
 public:
  ConvPlanCache() = default;
  ConvPlanCache(const ConvPlanCache&) = delete;
  ConvPlanCache& operator=(const ConvPlanCache&) = delete;

  int built() const { return built_; }
  int reused() const { return reused_; }
  int candidates_timed() const { return timed_; }
  double seconds() const { return seconds_; }

  // The plan of `key`, counted as reused; nullptr when there is none yet.
  std::shared_ptr<ConvPlan> reuse(const std::string& key);
  void add(const std::string& key, std::shared_ptr<ConvPlan> plan, int timed);
  const GemmTuner::Fp8Choice* fp8_choice(const std::string& key) const;
  void set_fp8_choice(const std::string& key, const GemmTuner::Fp8Choice& c) { fp8_[key] = c; }
  void add_seconds(double s) { seconds_ += s; }
  // Another timed choice among a layer's candidates, by key (the e4m3 stream's conv3 kernel:
  // layers/resnet50/e4m3_block.h): the winner's index in its candidate list, its time, how many were timed.
  struct TimedChoice {
    int index = 0;
    float ms = -1.f;
    int candidates = 0;
  };
  const TimedChoice* timed_choice(const std::string& key) const;
  void set_timed_choice(const std::string& key, const TimedChoice& c);
  // How the owner's forward will run (GemmTuner::Replay's two cases): Eager charges each fp8
  // candidate and its bf16 rival max(GPU time, host enqueue time), as an eager batch-1 loop pays
  // the host's launches; Graph (the default) the GPU's time alone. Set before the first prepare.
  void set_replay(GemmTuner::Replay r) { replay_ = r; }
  GemmTuner::Replay replay() const { return replay_; }

 private:
  std::map<std::string, std::shared_ptr<ConvPlan>> plans_;
  std::map<std::string, GemmTuner::Fp8Choice> fp8_;  // by the plan's key
  std::map<std::string, TimedChoice> choices_;
  int built_ = 0, reused_ = 0, timed_ = 0;
  double seconds_ = 0;
  GemmTuner::Replay replay_ = GemmTuner::Replay::Graph;
};

std::string conv_plan_key(const ConvProblem& c, int N, int H, int W, bool residual, ConvRoute route,
                          cudaStream_t stream);

// The chosen plan of `route` (Auto: of every route allowed) for `c` at input [N, H, W, in],
// candidates built, run on these buffers and timed; the winner runs last, so y holds its result,
// and its workspace is reserved on ctx. *timed gets the candidates timed. Throws a sentence
// naming `name` when none can run.
// `replay` Eager: the candidates timed as an eager loop launches them (GemmTuner::launch_for).
std::shared_ptr<ConvPlan> choose_conv_plan(Context& ctx, const ConvProblem& c, const std::string& name, ConvRoute route,
                                           int N, int H, int W, void* y, const void* x, const void* residual,
                                           int* timed, GemmTuner::Replay replay = GemmTuner::Replay::Graph);

// fp8: the e4m3 candidate of a 1×1 stride-1 convolution: x (x_elems elements) quantized with
// fp8's input scale, then `gemm` (y = ReLU(s_x·s_w·(x8 · W8ᵀ) + bias + 1·residual)), both kernels
// timed as one candidate, against `chosen` (its measured time, or timed now), on these buffers;
// LAPTIME_FP8_GEMM's policy applied; `replay` Eager: each side charged max(GPU, host enqueue)
// (ConvPlanCache::set_replay). `gemm` nullptr: cuBLASLt had no fp8 plan, `refused` says
// why (the choice is bf16, with that note). y holds chosen's result after. Throws a sentence
// naming `name` when cuDNN refuses chosen's re-run.
GemmTuner::Fp8Choice choose_fp8_conv(const Context& ctx, const ConvProblem& c, const std::string& name,
                                     const Fp8Weight& fp8, Gemm* gemm, const std::string& refused,
                                     const ConvPlan& chosen, int64_t x_elems, void* y, const void* x,
                                     const void* residual, GemmTuner::Replay replay = GemmTuner::Replay::Graph);

// "[N, H, W, C]", for the sentences.
std::string conv_shape_text(int N, int H, int W, int C);

}  // namespace laptime
