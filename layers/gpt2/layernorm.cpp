#include "layers/gpt2/layernorm.h"

#include "core/check.h"
#include "kernels/layernorm.cuh"

namespace laptime {

LayerNorm::LayerNorm(const DeviceWeights& w, const std::string& prefix, int C, float eps,
                     const lab::KernelChoice& kernels)
    : name_(prefix),
      weight_(w.get(prefix + ".weight")),
      bias_(w.get(prefix + ".bias")),
      C_(C),
      eps_(eps),
      dtype_(w.dtype()) {
  if (const auto it = kernels.find("layernorm"); it != kernels.end()) lab_ = lab::layernorm_version(it->second);
}

void LayerNorm::forward(const Context& ctx, void* y, const void* x, int rows, std::optional<DType> y_dtype,
                        const float* y_inv_scale) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  if (lab_) {
    if (y_dtype && *y_dtype != dtype_)
      throw Error("--kernel layernorm: '" + name_.str() + "' writes " + dtype_name(*y_dtype) +
                  " for the layer after it, which only the production version does.");
    lab_({y, x, weight_, bias_, rows, C_, eps_, dtype_}, ctx.stream());
    return;
  }
  if (y_dtype == DType::F8E4M3) {
    if (!y_inv_scale) throw Error("internal: an fp8 LayerNorm output needs its consumer's scale.");
    layernorm_forward_fp8(y, y_inv_scale, dtype_, x, weight_, bias_, rows, C_, eps_, ctx.stream());
    return;
  }
  layernorm_forward(dtype_, y_dtype.value_or(dtype_), y, x, weight_, bias_, rows, C_, eps_, ctx.stream());
}

// Reads x [rows, C], the gain and bias [C], writes y [rows, C] of y's type.
LayerCost LayerNorm::cost(const std::string& parent, int rows, std::optional<DType> y_dtype) const {
  const double N = rows, es = static_cast<double>(dtype_size(dtype_));
  LayerCost c = streaming_cost(name_.str(), parent, "norm", N * C_, N * C_, 2.0 * C_, es);
  c.output_bytes = N * C_ * static_cast<double>(dtype_size(y_dtype.value_or(dtype_)));
  return c;
}

}  // namespace laptime
