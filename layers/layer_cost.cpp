#include "layers/layer_cost.h"

#include <map>

#include "core/check.h"

namespace laptime {

LayerCost gemm_cost(const std::string& name, const std::string& parent, double rows, double in, double out,
                    double ab_bytes, double d_bytes, bool bias, bool residual) {
  LayerCost c{name, parent, "gemm"};
  c.flops = 2 * rows * in * out;
  c.weight_bytes = in * out * ab_bytes + (bias ? out * d_bytes : 0);
  c.input_bytes = rows * in * ab_bytes + (residual ? rows * out * d_bytes : 0);
  c.output_bytes = rows * out * d_bytes;
  return c;
}

LayerCost streaming_cost(const std::string& name, const std::string& parent, const char* kind, double in, double out,
                         double weights, double es) {
  LayerCost c{name, parent, kind};
  c.weight_bytes = weights * es;
  c.input_bytes = in * es;
  c.output_bytes = out * es;
  return c;
}

LayerCost composite_cost(const std::string& name, const std::string& parent) {
  return LayerCost{name, parent, "composite"};
}

// Walking backwards sums a nested composite before the one that holds it.
void sum_composites(std::vector<LayerCost>& v) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < v.size(); ++i) at[v[i].name] = i;
  for (size_t i = v.size(); i-- > 0;) {
    if (v[i].parent.empty()) continue;
    const auto it = at.find(v[i].parent);
    require(it != at.end() && it->second < i,
            "internal: layer cost '" + v[i].name + "' names a parent '" + v[i].parent + "' listed nowhere before it.");
    LayerCost& p = v[it->second];
    p.flops += v[i].flops;
    p.weight_bytes += v[i].weight_bytes;
    p.input_bytes += v[i].input_bytes;
    p.output_bytes += v[i].output_bytes;
  }
}

double total_flops(const std::vector<LayerCost>& costs) {
  std::map<std::string, bool> has_children;
  for (const LayerCost& c : costs)
    if (!c.parent.empty()) has_children[c.parent] = true;
  double sum = 0;
  for (const LayerCost& c : costs)
    if (!has_children.count(c.name)) sum += c.flops;
  return sum;
}

}  // namespace laptime
