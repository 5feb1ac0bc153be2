#include "layers/gpt2/transformer_block.h"

#include <algorithm>

namespace laptime {

TransformerBlock::TransformerBlock(const DeviceWeights& w, const std::string& prefix, int C, int n_head, float eps,
                                   Precision precision, AttentionKind attention, GeluPlacement gelu,
                                   const lab::KernelChoice& kernels)
    : name_(prefix),
      C_(C),
      dtype_(w.dtype()),
      ln_1_(w, prefix + ".ln_1", C, eps, kernels),
      attn_(w, prefix + ".attn", C, n_head, precision, attention, kernels),
      ln_2_(w, prefix + ".ln_2", C, eps, kernels),
      mlp_(w, prefix + ".mlp", C, precision, gelu) {}

std::size_t TransformerBlock::scratch_bytes(int B, int T) const {
  ArenaLayout l;
  l.reserve(static_cast<std::size_t>(B) * T * C_ * dtype_size(dtype_));  // normalised input
  l.reserve(std::max(attn_.scratch_bytes(B, T), mlp_.scratch_bytes(B, T)));
  return l.bytes();
}

void TransformerBlock::prepare(Context& ctx, int B, int T, GemmTuner* tuner) {
  attn_.prepare(ctx, B, T, tuner);
  mlp_.prepare(ctx, B * T, tuner);
}

void TransformerBlock::append_costs(std::vector<LayerCost>& out, const std::string& parent, int B, int T) const {
  const int rows = B * T;
  out.push_back(composite_cost(name_.str(), parent));
  // fp16 for tf32's fp16 attention, e4m3 for fp8's c_attn
  out.push_back(ln_1_.cost(name_.str(), rows, attn_.input_dtype(B, T)));
  attn_.append_costs(out, name_.str(), B, T, Accumulate::Add);
  out.push_back(ln_2_.cost(name_.str(), rows, mlp_.input_dtype(rows)));  // e4m3 for fp8's c_fc
  mlp_.append_costs(out, name_.str(), rows, Accumulate::Add);
}

void TransformerBlock::forward(const Context& ctx, void* x, int B, int T, void* scratch) const {
  NvtxRange range(ctx, NvtxLevel::Block, name_);
  ArenaLayout l;
  char* ln_out = static_cast<char*>(scratch) + l.reserve(static_cast<std::size_t>(B) * T * C_ * dtype_size(dtype_));
  char* sub = static_cast<char*>(scratch) + l.reserve(0);
  const int rows = B * T;
  // tf32 with cuDNN's fp16 core: ln_1 writes fp16, the input of the fp16 QKV projection.
  const DType attn_in = attn_.input_dtype(B, T);
  ln_1_.forward(ctx, ln_out, x, rows, attn_in, attn_in == DType::F8E4M3 ? attn_.input_inv_scale() : nullptr);
  attn_.forward(ctx, x, ln_out, B, T, sub, Accumulate::Add, attn_in);
  const DType mlp_in = mlp_.input_dtype(rows);
  ln_2_.forward(ctx, ln_out, x, rows, mlp_in, mlp_in == DType::F8E4M3 ? mlp_.input_inv_scale() : nullptr);
  mlp_.forward(ctx, x, ln_out, rows, sub, Accumulate::Add);
}

void TransformerBlock::begin_calibration(const Context& ctx) {
  attn_.begin_calibration(ctx);
  mlp_.begin_calibration(ctx);
}

void TransformerBlock::end_calibration(const Context& ctx) {
  attn_.end_calibration(ctx);
  mlp_.end_calibration(ctx);
}

}  // namespace laptime
