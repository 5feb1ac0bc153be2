#include "layers/linear.h"

#include "core/check.h"

namespace laptime {

Linear::Linear(const DeviceWeights& w, const std::string& prefix, int in, int out, Precision precision, HasBias bias)
    : Linear(w, prefix + ".weight", bias == HasBias::Yes ? prefix + ".bias" : std::string(), in, out, precision) {}

Linear::Linear(const DeviceWeights& w, const std::string& weight_name, const std::string& bias_name, int in, int out,
               Precision precision, int64_t ldy)
    : Linear(w.get(weight_name), bias_name.empty() ? nullptr : w.get(bias_name), w.dtype(), in, out, precision, ldy) {}

Linear::Linear(const void* weight, const void* bias, DType dtype, int in, int out, Precision precision, int64_t ldy,
               std::optional<DType> out_dtype)
    : weight_(weight),
      bias_(bias),
      in_(in),
      out_(out),
      ldy_(ldy),
      precision_(precision),
      dtype_(dtype),
      out_dtype_(out_dtype.value_or(dtype)) {}

void Linear::fuse_gelu() {
  require(bias_ != nullptr, "internal: the GELU epilogue needs a bias.");
  require(plans_.empty(), "internal: fuse_gelu() after prepare().");
  gelu_ = true;
}

void Linear::prepare(const Context& ctx, int rows, GemmTuner* tuner) {
  if (plans_.count(rows)) return;
  GemmSpec s;
  s.M = rows;
  s.N = out_;
  s.K = in_;
  s.b_layout = BLayout::NK;
  s.ab_dtype = dtype_;
  s.d_dtype = out_dtype_;
  s.precision = precision_;
  s.epilogue = gelu_ ? Epilogue::GeluBias : bias_ ? Epilogue::Bias : Epilogue::None;
  s.ldd = ldy_;
  Gemm& g = plans_.emplace(rows, Gemm(ctx.cublaslt(), s, ctx.workspace_bytes())).first->second;
  if (tuner) tuner->tune(ctx, g, weight_, bias_);
}

LayerCost Linear::cost(const std::string& name, const std::string& parent, int rows, Accumulate acc) const {
  if (!plans_.count(rows))
    throw Error("internal: the costs of '" + name + "' were asked for " + std::to_string(rows) +
                " rows, which it was not prepared for.");
  LayerCost c = gemm_cost(name, parent, rows, in_, out_, static_cast<double>(dtype_size(dtype_)),
                          static_cast<double>(dtype_size(out_dtype_)), bias_ != nullptr, acc == Accumulate::Add);
  if (dtype_ == DType::F16) c.precision = "fp16";
  return c;
}

void Linear::forward(const Context& ctx, void* y, const void* x, int rows, Accumulate acc) const {
  const auto it = plans_.find(rows);
  if (it == plans_.end())
    throw Error("internal: a linear layer [" + std::to_string(in_) + " -> " + std::to_string(out_) +
                "] was not prepared for " + std::to_string(rows) + " rows (prepare() comes first).");
  if (gelu_ && acc == Accumulate::Add) throw Error("internal: the GELU epilogue cannot accumulate into y.");
  it->second.run(ctx, y, x, weight_, bias_, 1.f, acc == Accumulate::Add ? 1.f : 0.f);
}

}  // namespace laptime
