// Linear: y[rows, out] = x[rows, in] · W[out, in]ᵀ + b, one cuBLASLt call with the bias in
// its epilogue. With Accumulate::Add the product is added into y (beta = 1), which is how
// the residual connection is fused into the projection GEMMs of a transformer block.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/context.h"
#include "layers/device_weights.h"
#include "layers/gemm.h"
#include "layers/gemm_tuner.h"
#include "layers/layer_cost.h"

namespace laptime {

enum class Accumulate { Overwrite, Add };
enum class HasBias { No, Yes };

class Linear {
 public:
  // Reads `<prefix>.weight` [out, in] and, with HasBias::Yes, `<prefix>.bias` [out].
  Linear(const DeviceWeights& w, const std::string& prefix, int in, int out, Precision precision, HasBias bias);
  // `ldy`: row stride of y in elements (0: dense, = out). A padded stride keeps rows of an
  // odd-width output (GPT-2's 50257 logits) aligned, so cuBLASLt can use its Hopper kernels.
  Linear(const DeviceWeights& w, const std::string& weight_name, const std::string& bias_name, int in, int out,
         Precision precision, int64_t ldy = 0);
  // Weights that live elsewhere (e.g. a padded copy): weight [out, in] of `dtype`, bias [out] or
  // nullptr of the output's type: `out_dtype`, which is `dtype` unless given (tf32's fp16 attention
  // projections read fp16 and write fp32: layers/attention.h).
  Linear(const void* weight, const void* bias, DType dtype, int in, int out, Precision precision, int64_t ldy = 0,
         std::optional<DType> out_dtype = std::nullopt);

  // y = gelu(x · Wᵀ + b) in the GEMM's epilogue (cuBLASLt GELU_BIAS) from now on. Needs a
  // bias and Accumulate::Overwrite; call before the first prepare().
  void fuse_gelu();
  bool gelu_fused() const { return gelu_; }

  // Builds the cuBLASLt plan for `rows`. The build contract (docs/DESIGN-NOTES.md): plans are
  // made here only; forward() on a shape that was not prepared throws.
  // With a tuner, the algorithm is chosen by timing (layers/gemm_tuner.h) instead of taking
  // cuBLASLt's first heuristic pick.
  void prepare(const Context& ctx, int rows, GemmTuner* tuner = nullptr);
  void forward(const Context& ctx, void* y, const void* x, int rows, Accumulate acc = Accumulate::Overwrite) const;
  // What forward(rows, acc) computes and moves (layers/layer_cost.h), under `name`: the NVTX
  // range its owner opens around it. fp16 operands (tf32's attention projections) say so.
  // Throws when `rows` was not prepared.
  LayerCost cost(const std::string& name, const std::string& parent, int rows, Accumulate acc) const;

  int in_features() const { return in_; }
  int out_features() const { return out_; }

 private:
  const void* weight_;  // [out, in]
  const void* bias_;    // [out] or nullptr
  int in_, out_;
  int64_t ldy_;
  Precision precision_;
  DType dtype_;      // x and W
  DType out_dtype_;  // y and the bias
  bool gelu_ = false;
  std::map<int, Gemm> plans_;  // by rows
};

}  // namespace laptime
