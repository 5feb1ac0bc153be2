#include "layers/attention.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "kernels/attention.cuh"
#include "kernels/flash_attention.cuh"

namespace laptime {

struct CausalSelfAttention::Slots {
  std::size_t qkv, q, k, v, scores, probs, heads, total;
};

CausalSelfAttention::CausalSelfAttention(const DeviceWeights& w, const std::string& prefix, int C, int n_head,
                                         Precision precision)
    : name_(prefix),
      C_(C),
      H_(n_head),
      hd_(C / n_head),
      precision_(precision),
      dtype_(w.dtype()),
      fused_(flash_attention_supported(w.dtype(), C / std::max(n_head, 1))),
      c_attn_(w, prefix + ".c_attn", C, 3 * C, precision, HasBias::Yes),
      c_proj_(w, prefix + ".c_proj", C, C, precision, HasBias::Yes) {
  require(n_head > 0 && C % n_head == 0, "n_embd (" + std::to_string(C) + ") is not divisible by n_head (" +
                                             std::to_string(n_head) + ").");
}

CausalSelfAttention::Slots CausalSelfAttention::slots(int B, int T) const {
  const std::size_t bt = static_cast<std::size_t>(B) * T, es = dtype_size(dtype_);
  // The fused kernel needs only the QKV projection and the merged heads.
  const std::size_t tt = fused_ ? 0 : static_cast<std::size_t>(B) * H_ * T * T;
  ArenaLayout l;
  Slots s{};
  s.qkv = l.reserve(bt * 3 * C_ * es);
  s.q = l.reserve(fused_ ? 0 : bt * C_ * es);
  s.k = l.reserve(fused_ ? 0 : bt * C_ * es);
  s.v = l.reserve(fused_ ? 0 : bt * C_ * es);
  s.scores = l.reserve(tt * sizeof(float));
  s.probs = l.reserve(tt * es);
  s.heads = l.reserve(bt * C_ * es);
  s.total = l.bytes();
  return s;
}

std::size_t CausalSelfAttention::scratch_bytes(int B, int T) const { return slots(B, T).total; }

void CausalSelfAttention::prepare(const Context& ctx, int B, int T) {
  c_attn_.prepare(ctx, B * T);
  c_proj_.prepare(ctx, B * T);
  const auto key = std::make_pair(B, T);
  if (fused_ || scores_plans_.count(key)) return;
  const int64_t head_stride = static_cast<int64_t>(T) * hd_, tt = static_cast<int64_t>(T) * T;
  // S[T, T] = q[T, hd] · k[T, hd]ᵀ, per head; fp32 output so the softmax sees unrounded scores.
  GemmSpec s;
  s.M = T; s.N = T; s.K = hd_;
  s.b_layout = BLayout::NK;
  s.ab_dtype = dtype_;
  s.d_dtype = DType::F32;
  s.precision = precision_;
  s.batch = B * H_;
  s.stride_a = head_stride; s.stride_b = head_stride; s.stride_d = tt;
  scores_plans_.emplace(key, Gemm(ctx.cublaslt(), s, ctx.workspace_bytes()));
  // O[T, hd] = P[T, T] · v[T, hd], per head.
  GemmSpec p;
  p.M = T; p.N = hd_; p.K = T;
  p.b_layout = BLayout::KN;
  p.ab_dtype = p.d_dtype = dtype_;
  p.precision = precision_;
  p.batch = B * H_;
  p.stride_a = tt; p.stride_b = head_stride; p.stride_d = head_stride;
  pv_plans_.emplace(key, Gemm(ctx.cublaslt(), p, ctx.workspace_bytes()));
}

void CausalSelfAttention::forward(const Context& ctx, void* y, const void* x, int B, int T, void* scratch,
                                  Accumulate acc) {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  prepare(ctx, B, T);
  const Slots s = slots(B, T);
  auto at = [scratch](std::size_t off) { return static_cast<char*>(scratch) + off; };
  const cudaStream_t st = ctx.stream();

  c_attn_.forward(ctx, at(s.qkv), x, B * T);
  if (fused_) {
    flash_attention_forward(at(s.heads), at(s.qkv), B, T, H_, st);
    c_proj_.forward(ctx, y, at(s.heads), B * T, acc);
    return;
  }
  split_qkv_heads(dtype_, at(s.q), at(s.k), at(s.v), at(s.qkv), B, T, H_, hd_, st);
  const float scale = 1.f / std::sqrt(static_cast<float>(hd_));
  scores_plans_.at({B, T}).run(ctx, at(s.scores), at(s.q), at(s.k), nullptr, scale, 0.f);
  causal_softmax(dtype_, at(s.probs), reinterpret_cast<const float*>(at(s.scores)), B * H_, T, st);
  // The P·V output reuses the q slot: q is dead once the scores exist.
  pv_plans_.at({B, T}).run(ctx, at(s.q), at(s.probs), at(s.v));
  merge_heads(dtype_, at(s.heads), at(s.q), B, T, H_, hd_, st);
  c_proj_.forward(ctx, y, at(s.heads), B * T, acc);
}

}  // namespace laptime
