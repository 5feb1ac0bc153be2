// ResNet's head: global average pool (`avgpool`), then the fully connected layer (`fc`,
// cuBLASLt through Linear, bias in its epilogue): logits[N, classes] = mean_hw(x) · Wᵀ + b.
#pragma once

#include <string>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/device_weights.h"
#include "layers/linear.h"
#include "layers/resnet50/pooling.h"

namespace laptime {

class Classifier {
 public:
  // Reads `fc.weight` [classes, C] and `fc.bias` [classes]. `kernels`: laptime lab's avgpool
  // version, when named (--kernel avgpool=vN).
  Classifier(const DeviceWeights& w, int C, int classes, Precision precision, const lab::KernelChoice& kernels = {});

  void prepare(const Context& ctx, int N);  // the fc's cuBLASLt plan for N rows
  // fp8: the fc's calibration (layers/linear.h); its input, the pooled features, stays bf16 and
  // the fc quantizes it when it runs fp8.
  void begin_calibration(const Context& ctx) { fc_.begin_calibration(ctx); }
  void end_calibration(const Context& ctx) { fc_.end_calibration(ctx); }
  const Linear& fc() const { return fc_; }
  // logits: [N, classes]; x: [N, H, W, C]; pooled: [N, C] (scratch, holds the pooled features after).
  // x_scale non-null: x is e4m3 with that scale (fp8 ResNet-50's e4m3 stream); the pool writes bf16.
  void forward(const Context& ctx, void* logits, const void* x, int N, int H, int W, void* pooled,
               const float* x_scale = nullptr);
  // Its two ranges (avgpool, fc) for an input [N, H, W, C], N prepared, with what each
  // computes and moves (layers/layer_cost.h).
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W,
                    bool e4m3_input = false) const;

 private:
  int C_;
  GlobalAvgPool avgpool_;
  NvtxName fc_name_;
  Linear fc_;  // [classes, C]
};

}  // namespace laptime
