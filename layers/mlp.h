// GPT-2 MLP: y (+)= gelu(x · W_fcᵀ + b_fc) · W_projᵀ + b_proj, hidden width 4C.
//   h.i.mlp.c_fc    cuBLASLt; with the GELU in its epilogue (GELU_BIAS) where chosen
//   h.i.mlp.gelu    the GELU kernel, only when it is not in the epilogue
//   h.i.mlp.c_proj  cuBLASLt; Accumulate::Add fuses the residual
// fp8 (layers/linear.h): each GEMM runs in e4m3 where that measured faster. c_proj is chosen
// first, as if it quantized its own input; when it runs fp8 and c_fc does too, c_fc's epilogue
// writes the GELU output in e4m3 with c_proj's scale (half the bytes of the [rows, 4C] hidden
// activation, and no quantization pass); when c_fc stays bf16, c_proj quantizes. The residual
// stream c_proj adds into stays bf16 (an fp8 residual would round the whole stream to 3
// mantissa bits at every block).
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/device_weights.h"
#include "layers/linear.h"

namespace laptime {

// Where the GELU runs. Auto: the epilogue in bf16 and tf32 (measured faster, within the
// bounds), the kernel in strict fp32 (see MLP::gelu_in_epilogue_by_default).
enum class GeluPlacement { Auto, Epilogue, Kernel };

class MLP {
 public:
  // Weights `<prefix>.c_fc.{weight,bias}` [4C, C], [4C] and `<prefix>.c_proj.{weight,bias}` [C, 4C], [C].
  MLP(const DeviceWeights& w, const std::string& prefix, int C, Precision precision,
      GeluPlacement gelu = GeluPlacement::Auto);

  static bool gelu_in_epilogue_by_default(Precision p);

  std::size_t scratch_bytes(int B, int T) const;
  void prepare(const Context& ctx, int rows, GemmTuner* tuner = nullptr);
  // y, x: [rows, C]; scratch: scratch_bytes bytes (the [rows, 4C] hidden activation).
  void forward(const Context& ctx, void* y, const void* x, int rows, void* scratch, Accumulate acc) const;
  bool gelu_in_epilogue() const { return c_fc_.gelu_fused(); }
  // Its range and those inside it (c_fc, gelu when it is a kernel, c_proj) for `rows`, as
  // prepared, with what each computes and moves (layers/layer_cost.h); `acc` as forward() gets it.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int rows, Accumulate acc) const;

  // fp8: what x must be for forward(rows) (F8E4M3 when c_fc reads fp8), and its inverse scale.
  DType input_dtype(int rows) const { return c_fc_.input_dtype(rows); }
  const float* input_inv_scale() const { return c_fc_.input_inv_scale(); }
  // fp8 calibration of both GEMMs (layers/linear.h).
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  const Linear& c_fc() const { return c_fc_; }
  const Linear& c_proj() const { return c_proj_; }

 private:
  NvtxName name_, c_fc_name_, gelu_name_, c_proj_name_;
  int C_;
  DType dtype_;
  Linear c_fc_;    // [4C, C]
  Linear c_proj_;  // [C, 4C]
};

}  // namespace laptime
