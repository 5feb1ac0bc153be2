// ResNet's pooling layers on NHWC activations, one NVTX range each: the stem's 3×3
// stride-2 max pool (`maxpool`) and the global average pool before the classifier (`avgpool`).
#pragma once

#include <string>

#include "core/context.h"
#include "core/dtype.h"
#include "core/nvtx.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/registry.h"
#include "layers/layer_cost.h"

namespace laptime {

class MaxPool {
 public:
  // `kernels` may name laptime lab's version to run (--kernel maxpool=vN, kernels/lab/registry.h);
  // production's otherwise.
  MaxPool(const std::string& name, DType dtype, const lab::KernelChoice& kernels = {});
  static int out_size(int in);  // 3×3 window, stride 2, padding 1
  // y: [N, out_size(H), out_size(W), C]; x: [N, H, W, C].
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C) const;
  // What that forward reads and writes (layers/layer_cost.h), under its range's name.
  LayerCost cost(const std::string& parent, int N, int H, int W, int C) const;

 private:
  NvtxName name_;
  DType dtype_;
  lab::MaxPoolLaunch launch_;
};

class GlobalAvgPool {
 public:
  // `kernels` may name laptime lab's version to run (--kernel avgpool=vN); the e4m3 input has one.
  GlobalAvgPool(const std::string& name, DType dtype, const lab::KernelChoice& kernels = {});
  // y: [N, C]; x: [N, H, W, C]. x_scale non-null: x is e4m3 whose real value is *x_scale · x
  // (fp8 ResNet-50's e4m3 stream), y bf16.
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C,
               const float* x_scale = nullptr) const;
  // As MaxPool's; e4m3_input: x is 1 byte an element.
  LayerCost cost(const std::string& parent, int N, int H, int W, int C, bool e4m3_input = false) const;

 private:
  NvtxName name_;
  DType dtype_;
  lab::AvgPoolLaunch launch_;
};

}  // namespace laptime
