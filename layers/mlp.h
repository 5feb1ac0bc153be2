// GPT-2 MLP: y (+)= gelu(x · W_fcᵀ + b_fc) · W_projᵀ + b_proj, hidden width 4C.
#pragma once

#include <string>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/device_weights.h"
#include "layers/linear.h"

namespace laptime {

class MLP {
 public:
  // Weights `<prefix>.c_fc.{weight,bias}` [4C, C], [4C] and `<prefix>.c_proj.{weight,bias}` [C, 4C], [C].
  MLP(const DeviceWeights& w, const std::string& prefix, int C, Precision precision);

  std::size_t scratch_bytes(int B, int T) const;
  void prepare(const Context& ctx, int rows);
  // y, x: [rows, C]; scratch: scratch_bytes bytes (the [rows, 4C] hidden activation).
  void forward(const Context& ctx, void* y, const void* x, int rows, void* scratch, Accumulate acc);

 private:
  NvtxName name_;
  int C_;
  DType dtype_;
  Linear c_fc_;    // [4C, C]
  Linear c_proj_;  // [C, 4C]
};

}  // namespace laptime
