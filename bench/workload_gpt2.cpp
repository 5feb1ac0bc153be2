// GPT-2 as a bench workload: the model as the build policy makes it (models/policy.h), on seeded
// token ids.
//
// FLOPs and bytes per layer: published by the layers for the shapes built (GPT2::layer_costs,
// layers/layer_cost.h); FLOPs per forward is their sum: per block 24·N·C² for the four matrix products (N = B·T
// tokens) plus 4·B·T²·C for attention's full T×T square, and 2·N·C·vocab for the LM head.
#include <string>
#include <utility>

#include "bench/lab/kernel_files.h"
#include "bench/workload.h"
#include "core/check.h"
#include "core/env_switches.h"
#include "models/gpt2.h"

namespace laptime {
namespace {

class Gpt2Workload : public Workload {
 public:
  Gpt2Workload(Context& ctx, const WorkloadOptions& o) {
    Gpt2Build b = build_gpt2(ctx, o, lab::load_kernel_files);
    model_ = std::move(b.model);
    source_ = std::move(b.weights_source);
    B_ = b.B;
    T_ = b.T;
    model_->upload_tokens(ctx, seeded_tokens(o.seed, int64_t{B_} * T_, model_->config().vocab_size), B_, T_);
    // fp8: the activation scales from this batch, in bf16, once (models/gpt2.h).
    model_->calibrate(ctx, B_, T_);
    kernels_ = lab::kernel_choice_text(o.kernels);
  }

  void forward(const Context& ctx) override { model_->forward(ctx, B_, T_); }
  const void* output() const override { return model_->logits(); }
  std::vector<float> output_to_host(const Context& ctx) const override { return model_->logits_to_host(ctx, B_, T_); }
  std::string shape() const override {
    return "B=" + std::to_string(B_) + " T=" + std::to_string(T_) + " (" + std::to_string(B_ * T_) + " tokens)";
  }
  std::string weights_source() const override { return source_; }
  std::string variant() const override {
    const int lab_core = model_->attention_lab_core();
    return std::string("attention ") +
           (lab_core >= 0 ? "lab v" + std::to_string(lab_core + 1)
                          : attention_kind_name(model_->attention_kind(B_, T_))) +
           (model_->attention_f16_core(B_, T_) ? " (fp16 core and projections)" : "") + ", GELU " +
           (model_->gelu_in_epilogue() ? "in the c_fc epilogue" : "kernel") +
           (model_->gemm_shapes_timed()
                ? ", GEMM algorithms timed at build (" + std::to_string(model_->gemm_shapes_timed()) + " shapes, " +
                      std::to_string(static_cast<int>(model_->gemm_tuning_ms())) + " ms)"
                : ", GEMM algorithms: heuristic") +
           fp8_variant() + (kernels_.empty() ? "" : ", --kernel " + kernels_);
  }
  std::vector<std::string> plan_report() const override { return model_->describe_fp8(B_, T_); }
  int64_t items_per_forward() const override { return int64_t{B_} * T_; }
  const char* item_name() const override { return "tokens"; }
  std::vector<LayerCost> layer_costs() const override { return model_->layer_costs(B_, T_); }
  int64_t param_count() const override { return model_->param_count(); }
  std::size_t weight_bytes() const override { return model_->weight_bytes(); }
  std::size_t activation_bytes() const override { return model_->activation_bytes(); }

 private:
  // fp8: how many GEMMs run in e4m3, and the switches that changed the choice.
  std::string fp8_variant() const {
    if (model_->precision() != Precision::FP8) return "";
    const int gemms = 4 * model_->config().n_layer + 1;
    std::string s = ", fp8 GEMMs " + std::to_string(model_->fp8_layers(B_, T_).size()) + " of " + std::to_string(gemms);
    if (!env::fp8_fast_accum()) s += ", fp32 promotion every 4 k-blocks";
    for (const env::Switch& sw : {env::kFp8Gemm, env::kFp8FastAccum, env::kFp8Mlp})
      if (const std::string v = env::text(sw); !v.empty()) s += std::string(" (") + sw.name + "=" + v + ")";
    return s;
  }

  std::unique_ptr<GPT2> model_;
  std::string kernels_ = "";  // laptime lab's versions swapped in, as --kernel named them
  std::string source_;
  int B_ = 0, T_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_gpt2_workload(Context& ctx, const WorkloadOptions& o) {
  return std::make_unique<Gpt2Workload>(ctx, o);
}

}  // namespace laptime
