// One GPT-2 transformer block, pre-norm:
//   x = x + attn(ln_1(x))
//   x = x + mlp(ln_2(x))
// The residual stream x is updated in place; both adds are fused into the projection
// GEMMs (beta = 1), so the block launches no separate residual kernel.
// fp8: x stays bf16 (the residual stream); ln_1 and ln_2 write e4m3 straight into the GEMM
// after them when that GEMM runs fp8 (their statistics in fp32), else bf16.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/gpt2/attention.h"
#include "layers/gpt2/layernorm.h"
#include "layers/gpt2/mlp.h"

namespace laptime {

class TransformerBlock {
 public:
  // `prefix` is `h.<i>`; sub-layers are `<prefix>.ln_1`, `.attn`, `.ln_2`, `.mlp`.
  // `kernels`: laptime lab's versions swapped in (--kernel layernorm=vN, attention=vN).
  TransformerBlock(const DeviceWeights& w, const std::string& prefix, int C, int n_head, float eps, Precision precision,
                   AttentionKind attention = AttentionKind::Auto, GeluPlacement gelu = GeluPlacement::Auto,
                   const lab::KernelChoice& kernels = {});

  std::size_t scratch_bytes(int B, int T) const;
  void prepare(Context& ctx, int B, int T, GemmTuner* tuner = nullptr);
  // x: [B, T, C], updated in place. One NVTX range at block level (`h.3`). (B, T) prepared.
  void forward(const Context& ctx, void* x, int B, int T, void* scratch) const;
  AttentionKind attention_kind(int B, int T) const { return attn_.kind(B, T); }
  int attention_lab_core() const { return attn_.lab_core(); }
  bool gelu_in_epilogue() const { return mlp_.gelu_in_epilogue(); }
  bool attention_f16_core(int B, int T) const { return attn_.uses_f16_core(B, T); }
  // Its range and every range inside it at (B, T), as prepared, with what each computes and
  // moves (layers/layer_cost.h), in forward order; composites not yet summed.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int B, int T) const;
  // fp8 calibration of the block's four GEMMs (layers/linear.h).
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  const CausalSelfAttention& attn() const { return attn_; }
  const MLP& mlp() const { return mlp_; }

 private:
  NvtxName name_;
  int C_;
  DType dtype_;
  LayerNorm ln_1_;
  CausalSelfAttention attn_;
  LayerNorm ln_2_;
  MLP mlp_;
};

}  // namespace laptime
