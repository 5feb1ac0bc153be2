#include "bench/layer_costs.h"

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/output_file.h"

namespace laptime {
namespace {
double element_bytes(Precision p) { return static_cast<double>(dtype_size(activation_dtype(p))); }
}  // namespace

nlohmann::json layer_costs_json(const std::string& model, Precision precision, const std::string& shape,
                                const std::vector<LayerCost>& costs) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerCost& c : costs) {
    nlohmann::json l{{"name", c.name},
                     {"parent", c.parent},
                     {"kind", c.kind},
                     {"flops", c.flops},
                     {"bytes", {{"weights", c.weight_bytes}, {"inputs", c.input_bytes}, {"outputs", c.output_bytes}}}};
    if (!c.precision.empty()) l["precision"] = c.precision;
    layers.push_back(std::move(l));
  }
  return {{"schema", "laptime.layers/1"},
          {"model", model},
          {"precision", precision_name(precision)},
          {"shape", shape},
          {"element_bytes", element_bytes(precision)},
          {"conventions",
           {{"flops", "multiply-add = 2; matrix products and convolutions only, elementwise work counts 0"},
            {"attention", "full T x T square for Q.K^T and P.V (the causal half is masked, not skipped)"},
            {"bytes", "weights, inputs (with any residual read) and outputs, each once, at the run's element size"},
            {"composite", "a range with parts is the sum of its parts"}}},
          {"layers", layers}};
}

void write_layer_costs(const std::string& path, const nlohmann::json& sidecar) {
  try {  // a temporary beside the target, renamed when complete (core/output_file.h)
    OutputFile out({"layer costs", path});
    out.write(sidecar.dump(1) + "\n");
    out.commit();
  } catch (const OutputError& e) {
    throw Error(e.what());
  }
}

}  // namespace laptime
