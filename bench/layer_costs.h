// What each layer of a built model must compute and move: the numbers behind the per-layer
// roofline (`laptime analyze --roofline-svg`, docs/PROFILING.md "Roofline per layer").
//
// One entry per NVTX range of `--nvtx layer` (and the block / composite ranges around
// them), keyed by the range's name (the weight prefix: `h.3.attn.c_attn`, `layer2.1.conv2`).
// The counts come from the shapes the model was built for, at the run's storage type:
//
//   flops    multiply-add = 2; matrix products and convolutions only. Elementwise work
//            (LayerNorm, GELU, softmax, bias, ReLU, residual add, pooling, the embedding
//            sum) counts 0 FLOPs: it is bandwidth, as in the bench's FLOPs per forward,
//            which is the sum of these entries' leaves (one formula, here).
//            Attention: the full T×T square (2·B·T·T·C for Q·Kᵀ and again for P·V),
//            as computed by the unfused path; the causal half is masked, not skipped.
//   bytes    the traffic the layer cannot avoid: every weight read once, every input
//            read once, every output written once, each at the run's element size (bf16: 2,
//            fp32/tf32: 4). Inputs include the residual that a projection or conv3
//            accumulates into; attention's core reads q, k, v and writes the merged heads
//            (never the T×T scores, which a fused kernel keeps on chip). Nothing is
//            assumed to stay in cache between layers.
//
// A composite range (`h.3.attn`, `h.3`, `layer2.1`) is the sum of its parts, flops and
// bytes: what it moves when no intermediate stays in cache.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/dtype.h"
#include "layers/stem_kind.h"

namespace laptime {

struct GPT2Config;
struct ResNetConfig;
struct ConvLayerInfo;

struct LayerCost {
  std::string name;    // the NVTX range
  std::string parent;  // the enclosing entry's name, "" at top level
  std::string kind;    // "gemm", "attention", "conv", "norm", "elementwise", "pool", "embedding", "block"
  double flops = 0;
  double weight_bytes = 0, input_bytes = 0, output_bytes = 0;
  // The precision the layer computes in when it is not the run's ("" otherwise): "fp16" for
  // tf32's attention (core and projections, layers/attention.h). The roofline takes that
  // precision's compute ceiling for the layer.
  std::string precision = "";
  double bytes() const { return weight_bytes + input_bytes + output_bytes; }
};

// GPT-2 at B sequences of T tokens: wte, per block h.{i} (ln_1, attn = {c_attn, core,
// c_proj}, ln_2, mlp = {c_fc, gelu, c_proj}), ln_f, lm_head; parents before children.
// gelu_kernel false: the GELU runs in c_fc's epilogue, so there is no `mlp.gelu` range and
// its 4C-wide round trip through memory is not part of the MLP's bytes.
// f16_attention (tf32 with cuDNN's fp16 core): ln_1 writes fp16, c_attn, the core and c_proj
// compute in fp16 (precision "fp16") and move 2-byte elements, except c_proj's fp32 residual
// read and output.
std::vector<LayerCost> gpt2_layer_costs(const GPT2Config& cfg, int B, int T, Precision precision,
                                        bool gelu_kernel = true, bool f16_attention = false);

// One convolution of `info`'s shape on a batch of B; `residual`: its output is added to a
// tensor of the output's shape read from memory (a bottleneck's conv3).
LayerCost conv_layer_cost(const ConvLayerInfo& info, int B, Precision precision, bool residual);

// ResNet-50 at batch B from its convolutions in forward order (ResNet50::conv_layers():
// stem, then per block conv1, conv2, conv3[, downsample]): conv1, maxpool, every block
// layer{s}.{b} with its convolutions, avgpool, fc. With StemKind::Fused (ResNet50::stem_kind())
// there is no `maxpool` range: conv1 is the fused kernel, its FLOPs the convolution's, its
// bytes the weights, the input and the pooled output (the conv output never reaches memory).
std::vector<LayerCost> resnet50_layer_costs(const ResNetConfig& cfg, const std::vector<ConvLayerInfo>& convs, int B,
                                            Precision precision, StemKind stem = StemKind::Cudnn);

// The FLOPs of a forward pass: the sum over the entries without children.
double total_flops(const std::vector<LayerCost>& costs);

// The sidecar (schema laptime.layers/1, read by trace/roofline.h).
nlohmann::json layer_costs_json(const std::string& model, Precision precision, const std::string& shape,
                                const std::vector<LayerCost>& costs);
// Writes it; throws Error with one sentence when the file cannot be written.
void write_layer_costs(const std::string& path, const nlohmann::json& sidecar);

}  // namespace laptime
