// LayerNorm layer: owns pointers to `<prefix>.weight` and `<prefix>.bias` [C].
#pragma once

#include <optional>
#include <string>

#include "core/context.h"
#include "core/nvtx.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/registry.h"
#include "layers/device_weights.h"
#include "layers/layer_cost.h"

namespace laptime {

class LayerNorm {
 public:
  // `kernels` may name laptime lab's version to run (--kernel layernorm=vN, kernels/lab/registry.h);
  // it writes the storage type only, so forward() then refuses another y_dtype.
  LayerNorm(const DeviceWeights& w, const std::string& prefix, int C, float eps, const lab::KernelChoice& kernels = {});
  // y, x: [rows, C]. One NVTX range named by the prefix (`h.3.ln_1`). y is of `y_dtype`: the
  // weights' type, F16 from F32 storage (what tf32's fp16 attention projections read), or
  // F8E4M3 from BF16 (fp8's GEMM inputs: y = e4m3(layernorm(x) · *y_inv_scale), the consuming
  // layer's inverse scale, layers/linear.h). The statistics are fp32 in every case: an fp8
  // mean or variance would lose the 2^-4 relative precision on every element at once.
  void forward(const Context& ctx, void* y, const void* x, int rows, std::optional<DType> y_dtype = std::nullopt,
               const float* y_inv_scale = nullptr) const;
  // What that forward reads and writes (layers/layer_cost.h), under its range's name.
  LayerCost cost(const std::string& parent, int rows, std::optional<DType> y_dtype = std::nullopt) const;

 private:
  NvtxName name_;
  const void* weight_;  // [C]
  const void* bias_;    // [C]
  int C_;
  float eps_;
  DType dtype_;
  lab::LayerNormLaunch lab_ = nullptr;  // --kernel layernorm=vN; nullptr: production (layernorm_forward)
};

}  // namespace laptime
