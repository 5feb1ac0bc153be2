// Causal multi-head self-attention (GPT-2's `attn`):
//   qkv = x · W_attnᵀ + b_attn              cuBLASLt, bias in the epilogue   [B, T, 3C]
//   q, k, v = split heads                    kernel                            [B, H, T, hd] each
//   S = q · kᵀ / sqrt(hd)                    cuBLASLt, batched over B·H, fp32 [B·H, T, T]
//   P = causal softmax(S)                    kernel, fp32 statistics          [B·H, T, T]
//   O = P · v                                cuBLASLt, batched over B·H       [B, H, T, hd]
//   y (+)= merge heads(O) · W_projᵀ + b_proj cuBLASLt; Accumulate::Add fuses the residual
// fp32 and tf32 materialise the T x T scores: simple and exact. bf16 with head size 64 (GPT-2)
// runs the fused flash kernel instead (kernels/flash_attention.cu): qkv -> merged heads in
// one launch, no T x T buffer. Both paths are checked against the same oracle.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/device_weights.h"
#include "layers/linear.h"

namespace laptime {

class CausalSelfAttention {
 public:
  // Weights `<prefix>.c_attn.{weight,bias}` [3C, C], [3C] and `<prefix>.c_proj.{weight,bias}` [C, C], [C].
  CausalSelfAttention(const DeviceWeights& w, const std::string& prefix, int C, int n_head, Precision precision);

  std::size_t scratch_bytes(int B, int T) const;
  void prepare(const Context& ctx, int B, int T);
  // y, x: [B, T, C]; scratch: scratch_bytes(B, T) bytes. One NVTX range (`h.3.attn`).
  void forward(const Context& ctx, void* y, const void* x, int B, int T, void* scratch, Accumulate acc);

 private:
  struct Slots;  // byte offsets of the intermediates inside the scratch
  Slots slots(int B, int T) const;

  NvtxName name_;
  int C_, H_, hd_;
  Precision precision_;
  DType dtype_;
  bool fused_;     // flash kernel instead of split/GEMM/softmax/GEMM/merge
  Linear c_attn_;  // [3C, C]
  Linear c_proj_;  // [C, C]
  std::map<std::pair<int, int>, Gemm> scores_plans_, pv_plans_;  // by (B, T)
};

}  // namespace laptime
