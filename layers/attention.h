// Causal multi-head self-attention (GPT-2's `attn`):
//   qkv = x · W_attnᵀ + b_attn              cuBLASLt, bias in the epilogue   [B, T, 3C]  h.i.attn.c_attn
//   heads = softmax(q·kᵀ/sqrt(hd), causal)·v one of three cores (below)       [B, T, C]   h.i.attn.core
//   y (+)= heads · W_projᵀ + b_proj          cuBLASLt; Accumulate::Add fuses the residual  h.i.attn.c_proj
// The core, chosen at run time (layers/attention_kind.h):
//   cudnn  cuDNN's fused attention graph (layers/sdpa_cudnn.h): qkv -> heads, bf16; in tf32
//          around an fp16 core (qkv converted to fp16, heads back to fp32)
//   flash  our fused kernels: qkv -> heads, no T x T matrix; bf16 with hd = 64
//          (kernels/flash_attention.cu, tensor cores), fp32 and tf32 with hd = 16, 32 or 64
//          (kernels/flash_attention_f32.cu, fp32 FFMA: exact in fp32 like naive)
//   naive  split heads, S = q·kᵀ (batched GEMM, fp32 out), causal softmax, P·v (batched GEMM),
//          merge heads: the T x T matrix in memory; every precision, exact in fp32
// All three are checked against the same CPU oracle (tests/test_gpt2_layers.cpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/attention_kind.h"
#include "layers/device_weights.h"
#include "layers/linear.h"

namespace laptime {

class CausalSelfAttention {
 public:
  // Weights `<prefix>.c_attn.{weight,bias}` [3C, C], [3C] and `<prefix>.c_proj.{weight,bias}` [C, C], [C].
  // Throws one sentence when `kind` cannot run this precision or head size.
  CausalSelfAttention(const DeviceWeights& w, const std::string& prefix, int C, int n_head, Precision precision,
                      AttentionKind kind = AttentionKind::Auto);
  ~CausalSelfAttention();
  CausalSelfAttention(CausalSelfAttention&&) noexcept;

  // Enough for every core prepare() may pick for (B, T).
  std::size_t scratch_bytes(int B, int T) const;
  // Plans for (B, T): the projections' GEMMs and the core's (cuDNN graph or batched GEMMs);
  // with Auto, the core itself (bf16: cuDNN, else flash where cuDNN refuses the shape;
  // fp32/tf32: flash; naive where flash lacks the head size).
  void prepare(Context& ctx, int B, int T, GemmTuner* tuner = nullptr);
  // y, x: [B, T, C]; scratch: scratch_bytes(B, T) bytes. Throws when (B, T) was not prepared.
  void forward(const Context& ctx, void* y, const void* x, int B, int T, void* scratch, Accumulate acc) const;

  // The core prepare() chose for (B, T) (never Auto); whether it is cuDNN's in fp16 (tf32).
  AttentionKind kind(int B, int T) const;
  bool uses_f16_core(int B, int T) const;

 private:
  struct Plan;
  struct Slots;  // byte offsets of the intermediates inside the scratch
  Slots slots(int B, int T, bool materialised, bool f16) const;
  const Plan& plan(int B, int T) const;

  NvtxName name_, c_attn_name_, core_name_, c_proj_name_;
  int C_, H_, hd_;
  Precision precision_;
  DType dtype_;
  AttentionKind requested_;
  Linear c_attn_;  // [3C, C]
  Linear c_proj_;  // [C, C]
  std::map<std::pair<int, int>, std::unique_ptr<Plan>> plans_;  // by (B, T)
};

}  // namespace laptime
