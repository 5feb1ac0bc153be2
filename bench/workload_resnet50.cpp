// ResNet-50 as a bench workload: the model as the build policy makes it (models/policy.h: batch
// 256 at 224×224 by default, seeded random weights of the real shapes unless --weights is given),
// on seeded images of unit variance.
//
// FLOPs and bytes per layer: published by the layers for the shapes built
// (ResNet50::layer_costs, layers/layer_cost.h); FLOPs per forward is their sum: 2·B·Ho·Wo·Cout·Cin·kh·kw per convolution (the stem,
// 3 per bottleneck, the 4 projection shortcuts: 53 in ResNet-50) and 2·B·C·classes for fc.
// BatchNorm is folded into the convolutions at load and costs nothing; bias, ReLU, residual
// adds and pooling are bandwidth, not FLOPs. At 224×224 this is 8.18 GFLOPs per image (the
// "4.1 GMACs" usually quoted for ResNet-50).
#include <utility>

#include "bench/lab/kernel_files.h"
#include "bench/workload.h"
#include "core/check.h"
#include "models/resnet50.h"

namespace laptime {
namespace {

class Resnet50Workload : public Workload {
 public:
  Resnet50Workload(Context& ctx, const WorkloadOptions& o) {
    Resnet50Build b = build_resnet50(ctx, o, lab::load_kernel_files);
    model_ = std::move(b.model);
    source_ = std::move(b.weights_source);
    B_ = b.B;
    S_ = b.S;
    model_->upload_input(ctx, seeded_images(o.seed, int64_t{B_} * 3 * S_ * S_), B_);
    model_->calibrate(ctx, B_);  // fp8: the activation scales from this batch (models/resnet50.h)
  }

  void forward(const Context& ctx) override { model_->forward(ctx, B_); }
  const void* output() const override { return model_->logits(); }
  std::vector<float> output_to_host(const Context& ctx) const override { return model_->logits_to_host(ctx, B_); }
  std::string shape() const override {
    return "B=" + std::to_string(B_) + " " + std::to_string(S_) + "x" + std::to_string(S_) + " (" + std::to_string(B_) +
           " images)";
  }
  std::string weights_source() const override { return source_; }
  int64_t items_per_forward() const override { return B_; }
  const char* item_name() const override { return "images"; }
  std::vector<LayerCost> layer_costs() const override { return model_->layer_costs(B_); }
  int64_t param_count() const override { return model_->param_count(); }
  std::size_t weight_bytes() const override { return model_->weight_bytes(); }
  std::size_t activation_bytes() const override { return model_->activation_bytes(); }
  std::vector<std::string> plan_report() const override {
    std::vector<std::string> v = model_->describe_convs(B_);
    for (std::string& line : model_->describe_fp8(B_)) v.push_back("fp8 " + line);
    return v;
  }
  std::string variant() const override {
    const std::string kernels = lab::kernel_choice_text(model_->config().kernels);
    return model_->stem_variant() + (kernels.empty() ? "" : ", --kernel " + kernels);
  }

 private:
  std::unique_ptr<ResNet50> model_;
  std::string source_;
  int B_ = 0, S_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_resnet50_workload(Context& ctx, const WorkloadOptions& o) {
  return std::make_unique<Resnet50Workload>(ctx, o);
}

}  // namespace laptime
