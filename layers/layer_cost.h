// What each layer of a built model must compute and move: the numbers behind the per-layer
// roofline (`laptime analyze --roofline-svg`, docs/PROFILING.md "Roofline per layer") and the
// bench's FLOPs per forward. Each layer publishes its own entries, under the name of the NVTX
// range it opens in forward() and for the shapes it was prepared for (Linear::cost,
// CausalSelfAttention::append_costs, Conv2d::cost, ...; the models gather them:
// GPT2::layer_costs, ResNet50::layer_costs), so the bench's sidecar (bench/layer_costs.h)
// cannot name a range that does not run. The formulas every layer uses are here:
//
//   flops    multiply-add = 2; matrix products and convolutions only. Elementwise work
//            (LayerNorm, GELU, softmax, bias, ReLU, residual add, pooling, the embedding
//            sum) counts 0 FLOPs: it is bandwidth, as in the bench's FLOPs per forward,
//            which is the sum of these entries' leaves (total_flops).
//            Attention: the full T×T square (2·B·T·T·C for Q·Kᵀ and again for P·V),
//            as computed by the unfused path; the causal half is masked, not skipped.
//   bytes    the traffic the layer cannot avoid: every weight read once, every input
//            read once, every output written once, each at its element size (bf16: 2,
//            fp32/tf32: 4, tf32's fp16 attention: 2). Inputs include the residual that a
//            projection or conv3 accumulates into; attention's core reads q, k, v and writes
//            the merged heads (never the T×T scores, which a fused kernel keeps on chip).
//            Nothing is assumed to stay in cache between layers.
//
// A composite range (`h.3.attn`, `h.3`, `layer2.1`) is the sum of its parts, flops and
// bytes: what it moves when no intermediate stays in cache. Host-only arithmetic.
#pragma once

#include <string>
#include <vector>

namespace laptime {

struct LayerCost {
  std::string name;    // the NVTX range
  std::string parent;  // the enclosing entry's name, "" at top level
  std::string kind;    // "gemm", "attention", "conv", "norm", "elementwise", "pool", "embedding", "composite"
  double flops = 0;
  double weight_bytes = 0, input_bytes = 0, output_bytes = 0;
  // The precision the layer computes in when it is not the run's ("" otherwise): "fp16" for
  // tf32's attention (core and projections, layers/gpt2/attention.h). The roofline takes that
  // precision's compute ceiling for the layer.
  std::string precision = "";
  double bytes() const { return weight_bytes + input_bytes + output_bytes; }
};

// y[rows, out] = x[rows, in] · Wᵀ [+ b] [+ y]: the weights [out, in] and the bias once, x once,
// y written once (and read once more when the product accumulates into it). x and W have
// `ab_bytes` an element; y, the bias and the accumulated y `d_bytes`.
LayerCost gemm_cost(const std::string& name, const std::string& parent, double rows, double in, double out,
                    double ab_bytes, double d_bytes, bool bias, bool residual);

// Bandwidth-only work of `kind`: `in` elements read, `out` written, `weights` elements of
// parameters, each of `es` bytes; no FLOPs.
LayerCost streaming_cost(const std::string& name, const std::string& parent, const char* kind, double in, double out,
                         double weights, double es);

// A range with parts: sum_composites fills it with their sum.
LayerCost composite_cost(const std::string& name, const std::string& parent);

// Fills every composite entry with the sum of its children. Children come after their parent.
// Throws Error when an entry names a parent that is not in the list.
void sum_composites(std::vector<LayerCost>& v);

// The FLOPs of a forward pass: the sum over the entries without children.
double total_flops(const std::vector<LayerCost>& costs);

}  // namespace laptime
