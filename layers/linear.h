// Linear: y[rows, out] = x[rows, in] · W[out, in]ᵀ + b, one cuBLASLt call with the bias in
// its epilogue. With Accumulate::Add the product is added into y (beta = 1), which is how
// the residual connection is fused into the projection GEMMs of a transformer block.
//
// fp8 (Precision::FP8). The layer keeps its bf16 plan and adds an e4m3 one; prepare() times
// both on the real shape and keeps the faster (small GEMMs lose in fp8 on an H200: the
// quantization and fp8 tile shapes cost more than the halved operand bytes save), per distinct
// shape once (GemmTuner's cache). The recipe:
//   weights   per tensor: s_w = amax(W) / 448, W8 = e4m3(W / s_w), made once from the bf16
//             copy at the first prepare(), on ctx's stream (layers/fp8_weight.h, shared with the
//             1×1 convolutions' fp8 GEMMs). Per channel was the alternative;
//             e4m3 is a floating-point format, so a channel whose weights are 100x smaller than
//             the tensor's largest still keeps 3 mantissa bits (it stays in the normal range
//             down to amax / 2^14): per-channel scales buy almost nothing here, measured on
//             the host (tests/test_fp8_reference.cpp: GPT-2's and ResNet-50's weights), and
//             cuBLASLt's per-tensor scale pointers keep every epilogue.
//   inputs    per tensor, static: s_x = kActivationMargin · amax(x) / 448, amax recorded by one
//             calibration pass in bf16 (begin_calibration(), forward() on a representative batch,
//             end_calibration()); the margin of 2 leaves one binade for batches that reach
//             further than the calibration batch (values beyond saturate to ±448 instead of
//             becoming NaN). No amax in the timed loop: the scale is a device value written once.
//   product   cuBLASLt's fp8 GEMM (or CUTLASS's, where timed faster), fp32 sums with the tensor
//             cores' fast accumulation (LAPTIME_FP8_FAST_ACCUM=off: promoted every 4 k-blocks),
//             D = s_x · s_w · (x8 · W8ᵀ) + bias [+ y], in bf16, or in
//             e4m3 (· the next layer's 1/s) when the consumer reads fp8 (set_fp8_output()).
// Who makes x8: with Fp8Input::Produced the caller writes e4m3 when input_dtype() says so (a
// LayerNorm, or the GEMM before with an fp8 D); with Fp8Input::Quantize the caller hands bf16
// and the layer quantizes it (one more pass, counted in the timing that chose fp8).
// Two layers chosen together (layers/gpt2/mlp.h: c_fc writing e4m3 for c_proj): prepare() also times
// what the owner needs to compare the pair with each layer alone, the fp8 plan with its e4m3
// output (when set_fp8_output() offered one) and a quantizing layer's fp8 GEMM without its
// quantize pass; the owner then calls write_fp8_output() and input_produced_in_fp8().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/buffer.h"
#include "core/context.h"
#include "layers/device_weights.h"
#include "layers/fp8_weight.h"
#include "layers/gemm.h"
#include "layers/gemm_tuner.h"
#include "layers/layer_cost.h"

namespace laptime {

enum class Accumulate { Overwrite, Add };
enum class HasBias { No, Yes };
// fp8: who turns x into e4m3 (see the top of this file).
enum class Fp8Input { Produced, Quantize };

class Linear {
 public:
  // The activations' margin over the calibration batch's amax (see the top of this file).
  static constexpr float kActivationMargin = kFp8ActivationMargin;

  // Reads `<prefix>.weight` [out, in] and, with HasBias::Yes, `<prefix>.bias` [out].
  Linear(const DeviceWeights& w, const std::string& prefix, int in, int out, Precision precision, HasBias bias);
  // `ldy`: row stride of y in elements (0: dense, = out). A padded stride keeps rows of an
  // odd-width output (GPT-2's 50257 logits) aligned, so cuBLASLt can use its Hopper kernels.
  Linear(const DeviceWeights& w, const std::string& weight_name, const std::string& bias_name, int in, int out,
         Precision precision, int64_t ldy = 0);
  // Weights that live elsewhere (e.g. a padded copy): weight [out, in] of `dtype`, bias [out] or
  // nullptr of the output's type: `out_dtype`, which is `dtype` unless given (tf32's fp16 attention
  // projections read fp16 and write fp32: layers/gpt2/attention.h).
  Linear(const void* weight, const void* bias, DType dtype, int in, int out, Precision precision, int64_t ldy = 0,
         std::optional<DType> out_dtype = std::nullopt);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) = delete;

  // y = gelu(x · Wᵀ + b) in the GEMM's epilogue (cuBLASLt GELU_BIAS) from now on. Needs a
  // bias and Accumulate::Overwrite; call before the first prepare().
  void fuse_gelu();
  bool gelu_fused() const { return gelu_; }

  // Builds the cuBLASLt plan for `rows`. The build contract (docs/DESIGN-NOTES.md): plans are
  // made here only; forward() on a shape that was not prepared throws.
  // With a tuner, the algorithm is chosen by timing (layers/gemm_tuner.h) instead of taking
  // cuBLASLt's first heuristic pick. In fp8 the fp8-or-bf16 choice is timed too (the tuner
  // caches it per shape; without one, each layer times its own).
  void prepare(const Context& ctx, int rows, GemmTuner* tuner = nullptr);
  // y: [rows, out] of output_dtype(rows); x: [rows, in] of input_dtype(rows).
  void forward(const Context& ctx, void* y, const void* x, int rows, Accumulate acc = Accumulate::Overwrite) const;
  // What forward(rows, acc) computes and moves (layers/layer_cost.h), under `name`: the NVTX
  // range its owner opens around it. fp16 operands (tf32's attention projections) say so.
  // Throws when `rows` was not prepared.
  LayerCost cost(const std::string& name, const std::string& parent, int rows, Accumulate acc) const;

  int in_features() const { return in_; }
  int out_features() const { return out_; }

  // --- fp8 (Precision::FP8; the storage type and no-ops otherwise) ---
  // The layer's name in reports (`h.3.mlp.c_fc`).
  void set_name(const std::string& name) { name_ = name; }
  const std::string& name() const { return name_; }
  // Before the first prepare(): who makes x8 (default Produced).
  void set_fp8_input(Fp8Input who);
  // Before prepare(rows): offers an e4m3 y, scaled by *inv_scale (the consumer's
  // input_inv_scale()): prepare() builds and times that fp8 plan beside the bf16-output one, and
  // forward() runs it once the owner calls write_fp8_output(rows). No residual (Accumulate::Add).
  void set_fp8_output(const float* inv_scale);
  // After prepare(rows), the owner's choice of a pair (layers/gpt2/mlp.h). write_fp8_output: the fp8
  // plan with the e4m3 output from now on (needs can_write_fp8_output). input_produced_in_fp8:
  // for a Quantize layer whose producer writes e4m3 from now on, the fp8 plan without the
  // quantize pass; the caller hands e4m3. Each overrides the layer's own fp8-or-bf16 choice.
  bool can_write_fp8_output(int rows) const;
  void write_fp8_output(int rows);
  bool can_read_fp8_input(int rows) const;  // a Quantize layer whose fp8 GEMM alone ran
  void input_produced_in_fp8(int rows);
  // What prepare(rows) measured (both times, the pair's, why fp8 was refused). fp8 only.
  const GemmTuner::Fp8Choice& fp8_choice(int rows) const;
  // True when forward(rows) runs the fp8 GEMM (calibrated or not).
  bool runs_fp8(int rows) const;
  // What the GEMM that forward(rows) runs is: "cuBLASLt", or the CUTLASS kernel the tuner kept
  // (layers/gemm.h's Gemm::backend), for plan lines.
  std::string backend(int rows) const;
  // What forward(rows) reads and writes: F8E4M3 or the storage type. Both are the storage type
  // while calibrating.
  DType input_dtype(int rows) const;
  DType output_dtype(int rows) const;
  // Device pointer to 1/s_x, for the producer that writes x8.
  const float* input_inv_scale() const;
  // Calibration: begin() zeroes the recorded amax; forward() then runs the bf16 plan and records
  // amax(x) on the stream (no host wait); end() waits for the stream once and sets s_x. Until
  // end(), forward() on an fp8 plan throws. Build time only.
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  bool calibrated() const { return fp8_.calibrated(); }
  // The scales as the device holds them, {s_w, s_x} (tests, reports). Synchronizes.
  std::pair<float, float> fp8_scales(const Context& ctx) const;
  // One line on the choice for `rows`: "fp8 (e4m3 out), fp8 53.6 us, bf16 66.2 us, e4m3 out
  // 50.1 us", "bf16, fp8 52.3 us, bf16 51.7 us, fp8 without its quantize 31.9 us", with why fp8
  // was refused when it was.
  std::string fp8_report(int rows) const;

 private:
  struct Plan;
  const Plan& plan(int rows) const;
  void prepare_fp8(const Context& ctx, int rows, const GemmSpec& bf16_spec, Plan& p, GemmTuner* tuner);
  GemmTuner::Fp8Choice time_fp8_choice(const Context& ctx, int rows, const Plan& p, const GemmTuner* tuner) const;

  std::string name_;
  const void* weight_;  // [out, in]
  const void* bias_;    // [out] or nullptr
  int in_, out_;
  int64_t ldy_;
  Precision precision_;
  DType dtype_;      // x and W
  DType out_dtype_;  // y and the bias
  bool gelu_ = false;
  std::map<int, std::unique_ptr<Plan>> plans_;  // by rows
  // fp8 only.
  Fp8Input fp8_input_ = Fp8Input::Produced;
  const float* out_inv_scale_ = nullptr;  // the consumer's 1/s when y may be e4m3
  Fp8Weight fp8_;                         // W8 and the scales (layers/fp8_weight.h)
  bool calibrating_ = false;
};

}  // namespace laptime
