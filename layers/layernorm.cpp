#include "layers/layernorm.h"

#include "kernels/layernorm.cuh"

namespace laptime {

LayerNorm::LayerNorm(const DeviceWeights& w, const std::string& prefix, int C, float eps)
    : name_(prefix), weight_(w.get(prefix + ".weight")), bias_(w.get(prefix + ".bias")), C_(C), eps_(eps),
      dtype_(w.dtype()) {}

void LayerNorm::forward(const Context& ctx, void* y, const void* x, int rows, std::optional<DType> y_dtype) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
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
