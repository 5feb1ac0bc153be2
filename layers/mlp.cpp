#include "layers/mlp.h"

#include "kernels/gelu.cuh"

namespace laptime {

bool MLP::gelu_in_epilogue_by_default(Precision p) { return p != Precision::FP32; }

MLP::MLP(const DeviceWeights& w, const std::string& prefix, int C, Precision precision, GeluPlacement gelu)
    : name_(prefix),
      c_fc_name_(prefix + ".c_fc"),
      gelu_name_(prefix + ".gelu"),
      c_proj_name_(prefix + ".c_proj"),
      C_(C),
      dtype_(w.dtype()),
      c_fc_(w, prefix + ".c_fc", C, 4 * C, precision, HasBias::Yes),
      c_proj_(w, prefix + ".c_proj", 4 * C, C, precision, HasBias::Yes) {
  if (gelu == GeluPlacement::Epilogue || (gelu == GeluPlacement::Auto && gelu_in_epilogue_by_default(precision)))
    c_fc_.fuse_gelu();
  c_proj_.set_fp8_input(Fp8Input::Quantize);  // until c_fc is known to write fp8 (prepare)
}

std::size_t MLP::scratch_bytes(int B, int T) const {
  return static_cast<std::size_t>(B) * T * 4 * C_ * dtype_size(dtype_);
}

void MLP::prepare(const Context& ctx, int rows, GemmTuner* tuner) {
  // c_proj first: whether c_fc's epilogue may write fp8 depends on it (see mlp.h).
  c_proj_.prepare(ctx, rows, tuner);
  const bool proj8 = c_proj_.runs_fp8(rows) && c_fc_.gelu_fused();
  c_fc_.set_fp8_output(proj8 ? c_proj_.input_inv_scale() : nullptr);
  c_fc_.prepare(ctx, rows, tuner);
  if (proj8 && c_fc_.output_dtype(rows) == DType::F8E4M3) c_proj_.input_produced_in_fp8(rows);
}

void MLP::begin_calibration(const Context& ctx) {
  c_fc_.begin_calibration(ctx);
  c_proj_.begin_calibration(ctx);
}

void MLP::end_calibration(const Context& ctx) {
  c_fc_.end_calibration(ctx);
  c_proj_.end_calibration(ctx);
}

void MLP::append_costs(std::vector<LayerCost>& out, const std::string& parent, int rows, Accumulate acc) const {
  const double N = rows, C = C_;
  out.push_back(composite_cost(name_.str(), parent));
  out.push_back(c_fc_.cost(c_fc_name_.str(), name_.str(), rows, Accumulate::Overwrite));
  // In c_fc's epilogue the GELU has no range, and its 4C-wide round trip through memory is gone.
  if (!c_fc_.gelu_fused())
    out.push_back(streaming_cost(gelu_name_.str(), name_.str(), "elementwise", N * 4 * C, N * 4 * C, 0,
                                 static_cast<double>(dtype_size(dtype_))));
  out.push_back(c_proj_.cost(c_proj_name_.str(), name_.str(), rows, acc));
}

void MLP::forward(const Context& ctx, void* y, const void* x, int rows, void* scratch, Accumulate acc) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  {
    NvtxRange r(ctx, NvtxLevel::Layer, c_fc_name_);
    c_fc_.forward(ctx, scratch, x, rows);
  }
  if (!c_fc_.gelu_fused()) {
    NvtxRange r(ctx, NvtxLevel::Layer, gelu_name_);
    gelu_forward(dtype_, scratch, scratch, static_cast<int64_t>(rows) * 4 * C_, ctx.stream());
  }
  NvtxRange r(ctx, NvtxLevel::Layer, c_proj_name_);
  c_proj_.forward(ctx, y, scratch, rows, acc);
}

}  // namespace laptime
