// What `laptime bench` times: a model built for one shape by the build policy (models/policy.h,
// which WorkloadOptions comes from), with its inputs on the device, whose forward() enqueues one
// full pass on the context's stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/context.h"
#include "layers/layer_cost.h"
#include "models/policy.h"

namespace laptime {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void forward(const Context& ctx) = 0;
  virtual const void* output() const = 0;  // device logits of the last forward
  // Those logits as dense fp32 on the host ([B, T, vocab] or [B, classes]), as `laptime forward`
  // writes them. Synchronizes: after the timed loop only.
  virtual std::vector<float> output_to_host(const Context& ctx) const = 0;
  // One line for the header: shapes and what the items are ("B=8 T=1024 (8192 tokens)").
  virtual std::string shape() const = 0;
  virtual std::string weights_source() const = 0;
  virtual int64_t items_per_forward() const = 0;  // tokens or images
  virtual const char* item_name() const = 0;      // "tokens" | "images"
  // Every NVTX range's FLOPs and bytes for the shapes built, as the layers publish them
  // (layers/layer_cost.h); what the bench's sidecar holds (bench/layer_costs.h).
  virtual std::vector<LayerCost> layer_costs() const = 0;
  double flops_per_forward() const { return total_flops(layer_costs()); }  // analytic, see docs/PERF.md
  virtual int64_t param_count() const = 0;
  virtual std::size_t weight_bytes() const = 0;
  virtual std::size_t activation_bytes() const = 0;
  // Lines for the header on how the model was planned (ResNet-50: each convolution's route and
  // engine, and the build time); none by default.
  virtual std::vector<std::string> plan_report() const { return {}; }
  // Which implementation variants ran, when the model has choices ("attention cudnn, GELU in
  // the c_fc epilogue"); empty otherwise. Printed and written to the JSON's config.variant.
  virtual std::string variant() const { return {}; }
};

// Throws Error with one sentence for an unknown model or a bad option.
std::unique_ptr<Workload> make_workload(Context& ctx, const WorkloadOptions& opts);
std::unique_ptr<Workload> make_gpt2_workload(Context& ctx, const WorkloadOptions& opts);
std::unique_ptr<Workload> make_resnet50_workload(Context& ctx, const WorkloadOptions& opts);

}  // namespace laptime
