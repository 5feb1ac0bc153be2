// ResNet-50 as a bench workload: batch 256 at 224×224 by default, seeded random weights of
// the real shapes unless --weights is given, seeded N(0, 1) images.
//
// FLOPs and bytes per layer: published by the layers for the shapes built
// (ResNet50::layer_costs, layers/layer_cost.h); FLOPs per forward is their sum: 2·B·Ho·Wo·Cout·Cin·kh·kw per convolution (the stem,
// 3 per bottleneck, the 4 projection shortcuts: 53 in ResNet-50) and 2·B·C·classes for fc.
// BatchNorm is folded into the convolutions at load and costs nothing; bias, ReLU, residual
// adds and pooling are bandwidth, not FLOPs. At 224×224 this is 8.18 GFLOPs per image (the
// "4.1 GMACs" usually quoted for ResNet-50).
#include "bench/lab/kernel_files.h"
#include "bench/workload.h"
#include "core/check.h"
#include "models/resnet50.h"

namespace laptime {
namespace {

class Resnet50Workload : public Workload {
 public:
  Resnet50Workload(Context& ctx, const WorkloadOptions& o) {
    ResNetConfig cfg = ResNetConfig::resnet50();
    HostWeights host;
    if (o.weights.empty()) {
      host = random_resnet50_weights(cfg, o.seed);
      source_ = "random (seed " + std::to_string(o.seed) + ", ResNet-50 shapes)";
    } else {
      SafeTensors file = SafeTensors::open(o.weights);
      cfg = ResNetConfig::from_file(file);
      host = load_resnet50_weights(file, cfg);
      source_ = o.weights;
    }
    B_ = o.batch ? o.batch : 256;
    S_ = o.image_size ? o.image_size : cfg.image_size;
    check_resnet50_input(cfg, B_, S_);  // before drawing a few hundred MB of images
    // --kernel NAME=FILE.cu: checked at the shapes this model runs each kernel at (registry.h's dims):
    // the stem's 7x7/2 output, the max pool's 3x3/2, then three stride-2 stages.
    const auto half = [](int side) { return (side - 1) / 2 + 1; };  // a stride-2 window with its padding
    const int conv1 = half(S_), last = half(half(half(half(conv1))));
    cfg.kernels = lab::load_kernel_files(ctx, o.kernels, o.kernel_files,
                                         {{"maxpool", {B_, conv1, conv1, cfg.base_width}},
                                          {"avgpool", {B_, last, last, cfg.features()}},
                                          {"stem", {B_, conv1 + 3, cfg.base_width}}},
                                         "resnet50", o.precision);
    cfg.eager_loop = o.eager_loop;
    model_ = std::make_unique<ResNet50>(ctx, cfg, host, o.precision, B_, S_, o.stem);
    WeightRng rng(o.seed + 1);
    model_->upload_input(ctx, rng.normal(int64_t{B_} * 3 * S_ * S_, 0.f, 1.f), B_);
    model_->calibrate(ctx, B_);  // fp8: the activation scales from this batch (models/resnet50.h)
  }

  void forward(const Context& ctx) override { model_->forward(ctx, B_); }
  const void* output() const override { return model_->logits(); }
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
