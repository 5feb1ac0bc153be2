#include "layers/resnet50/classifier.h"

namespace laptime {

Classifier::Classifier(const DeviceWeights& w, int C, int classes, Precision precision,
                       const lab::KernelChoice& kernels)
    : C_(C),
      avgpool_("avgpool", w.dtype(), kernels),
      fc_name_("fc"),
      fc_(w, "fc", C, classes, precision, HasBias::Yes) {
  fc_.set_fp8_input(Fp8Input::Quantize);
}

void Classifier::prepare(const Context& ctx, int N) { fc_.prepare(ctx, N); }

void Classifier::append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W,
                              bool e4m3_input) const {
  out.push_back(avgpool_.cost(parent, N, H, W, C_, e4m3_input));
  out.push_back(fc_.cost(fc_name_.str(), parent, N, Accumulate::Overwrite));
}

void Classifier::forward(const Context& ctx, void* logits, const void* x, int N, int H, int W, void* pooled,
                         const float* x_scale) {
  avgpool_.forward(ctx, pooled, x, N, H, W, C_, x_scale);
  NvtxRange range(ctx, NvtxLevel::Layer, fc_name_);
  fc_.forward(ctx, logits, pooled, N);
}

}  // namespace laptime
