// Causal multi-head self-attention (GPT-2's `attn`):
//   qkv = x · W_attnᵀ + b_attn              cuBLASLt, bias in the epilogue   [B, T, 3C]  h.i.attn.c_attn
//   heads = softmax(q·kᵀ/sqrt(hd), causal)·v one of four cores (below)       [B, T, C]   h.i.attn.core
//   y (+)= heads · W_projᵀ + b_proj          cuBLASLt; Accumulate::Add fuses the residual  h.i.attn.c_proj
// The core, chosen at run time (layers/gpt2/attention_kind.h):
//   cudnn  cuDNN's fused attention graph (layers/gpt2/sdpa_cudnn.h): qkv -> heads, bf16; in tf32
//          in fp16, and so are the two projections around it: x arrives in fp16 (ln_1 writes
//          it), c_attn is an fp16 GEMM writing fp16 qkv, c_proj reads the fp16 heads and writes
//          fp32 into the residual stream. fp16 rounds to the same 10-bit mantissa as TF32's
//          tensor cores (its range, ±65504, is the difference), qkv had to be fp16 for the
//          core anyway, and c_proj's TF32 GEMM would round the heads to the same values: the
//          arithmetic is tf32's, without two conversion passes and at fp16 tensor-core speed.
//   flash  our fused kernels: qkv -> heads, no T x T matrix; bf16 with hd = 64
//          (kernels/flash_attention.cu, tensor cores), fp32 and tf32 with hd = 16, 32 or 64
//          (kernels/flash_attention_f32.cu, fp32 FFMA: exact in fp32 like naive)
//   wgmma  flash's algorithm on Hopper's warpgroup MMA (kernels/flash_attention_sm90.cu): bf16,
//          hd = 64, an sm_90 GPU and a build for sm_90
//   naive  split heads, S = q·kᵀ (batched GEMM, fp32 out), causal softmax, P·v (batched GEMM),
//          merge heads: the T x T matrix in memory; every precision, exact in fp32
// fp8 (layers/linear.h): the two projections run in e4m3 where that measured faster; x
// arrives in e4m3 when c_attn does (ln_1 writes it, input_dtype()), c_proj quantizes the heads
// itself. The core stays bf16 (wgmma's or cuDNN's, as Auto picks for bf16): the softmax and its
// statistics in fp32, P·V on bf16 probabilities (e4m3's 3 mantissa bits on P would put a 2^-4
// relative error on every attention weight); cuDNN's fp8 attention is not used (not yet measured
// here).
// All four are checked against the same CPU oracle (tests/test_gpt2_layers.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/nvtx.h"
#include "kernels/lab/registry.h"
#include "layers/gpt2/attention_kind.h"
#include "layers/device_weights.h"
#include "layers/linear.h"

namespace laptime {

class CausalSelfAttention {
 public:
  // Weights `<prefix>.c_attn.{weight,bias}` [3C, C], [3C] and `<prefix>.c_proj.{weight,bias}` [C, C], [C].
  // Throws one sentence when `kind` cannot run this precision or head size. `kernels` may name
  // laptime lab's attention version (--kernel attention=vN, kernels/lab/registry.h): v3, v4 and v5
  // are Flash, Cudnn and Wgmma; v1 (the scores materialised by plain kernels) and v2 (online softmax, a warp
  // per query) run from kernels/lab/ in the core's place; with it, `kind` must be Auto.
  CausalSelfAttention(const DeviceWeights& w, const std::string& prefix, int C, int n_head, Precision precision,
                      AttentionKind kind = AttentionKind::Auto, const lab::KernelChoice& kernels = {});
  ~CausalSelfAttention();
  CausalSelfAttention(CausalSelfAttention&&) noexcept;

  // Enough for every core prepare() may pick for (B, T).
  std::size_t scratch_bytes(int B, int T) const;
  // Plans for (B, T): the core's (cuDNN graph or batched GEMMs) and the GEMMs of the
  // projections around it (fp16 ones around tf32's fp16 core, else the storage type's); with
  // Auto, the core itself (bf16: wgmma on sm_90; bf16 elsewhere and tf32: cuDNN, else flash where
  // cuDNN refuses the shape; fp32: flash; naive where flash lacks the head size).
  void prepare(Context& ctx, int B, int T, GemmTuner* tuner = nullptr);
  // y, x: [B, T, C]; scratch: scratch_bytes(B, T) bytes. Throws when (B, T) was not prepared.
  // x is of the storage type, or of `x_dtype` when given: input_dtype(B, T) saves a
  // conversion (F16 for tf32's fp16 core); y is always of the storage type.
  void forward(const Context& ctx, void* y, const void* x, int B, int T, void* scratch, Accumulate acc,
               std::optional<DType> x_dtype = std::nullopt) const;
  // The type forward() reads x in without converting it: F16 with tf32's fp16 core, F8E4M3
  // when fp8's c_attn runs in fp8, else the storage type.
  DType input_dtype(int B, int T) const;
  // fp8: the inverse scale the producer of an F8E4M3 x multiplies by (c_attn's).
  const float* input_inv_scale() const { return c_attn_.input_inv_scale(); }
  // fp8 calibration of both projections (layers/linear.h).
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  const Linear& c_attn() const { return c_attn_; }
  const Linear& c_proj() const { return c_proj_; }

  // The core prepare() chose for (B, T) (never Auto); whether it is cuDNN's in fp16 (tf32).
  AttentionKind kind(int B, int T) const;
  // laptime lab's version index running the core (0: v1, 1: v2), -1 when kind() runs it.
  int lab_core() const { return lab_core_; }
  bool uses_f16_core(int B, int T) const;

  // Its range and the three inside it (c_attn, core, c_proj) at (B, T), as prepared, with what
  // each computes and moves (layers/layer_cost.h): the core at the full T×T square whichever
  // core runs, reading qkv and writing the heads; tf32's fp16 path at 2-byte elements and
  // marked "fp16". `acc` as forward() gets it.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int B, int T, Accumulate acc) const;

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
  int lab_core_ = -1;  // --kernel attention=v1|v2
  Linear c_attn_;      // [3C, C]
  Linear c_proj_;      // [C, C]
  // tf32's fp16 core: fp16 copies of W_attn, b_attn and W_proj (made in the first prepare()
  // that needs them, on ctx's stream), and the projections that read them.
  const void *w_attn_, *b_attn_, *w_proj_, *b_proj_;
  DeviceBuffer weights16_;
  std::optional<Linear> c_attn16_, c_proj16_;
  std::map<std::pair<int, int>, std::unique_ptr<Plan>> plans_;  // by (B, T)
};

}  // namespace laptime
