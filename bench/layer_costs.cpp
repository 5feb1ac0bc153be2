#include "bench/layer_costs.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/output_file.h"
#include "layers/pooling.h"
#include "models/gpt2.h"
#include "models/resnet50.h"

namespace laptime {
namespace {

double element_bytes(Precision p) { return static_cast<double>(dtype_size(activation_dtype(p))); }

// y[rows, out] = x[rows, in] · Wᵀ [+ b] [+ y]: weights [out, in] and the bias once, x once,
// y written once (and read once more when the product accumulates into it).
LayerCost linear_cost(const std::string& name, const std::string& parent, double rows, double in, double out,
                      bool bias, bool residual, double es) {
  LayerCost c{name, parent, "gemm"};
  c.flops = 2 * rows * in * out;
  c.weight_bytes = (in * out + (bias ? out : 0)) * es;
  c.input_bytes = (rows * in + (residual ? rows * out : 0)) * es;
  c.output_bytes = rows * out * es;
  return c;
}

// Bandwidth-only work: `in` elements read, `out` written, `weights` elements of parameters.
LayerCost streaming_cost(const std::string& name, const std::string& parent, const char* kind, double in, double out,
                         double weights, double es) {
  LayerCost c{name, parent, kind};
  c.weight_bytes = weights * es;
  c.input_bytes = in * es;
  c.output_bytes = out * es;
  return c;
}

LayerCost composite(const std::string& name, const std::string& parent) { return LayerCost{name, parent, "composite"}; }

// Fills every composite entry with the sum of its children. Children come after their parent,
// so walking backwards sums a nested composite before the one that holds it.
void sum_composites(std::vector<LayerCost>& v) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < v.size(); ++i) at[v[i].name] = i;
  for (size_t i = v.size(); i-- > 0;) {
    if (v[i].parent.empty()) continue;
    LayerCost& p = v[at.at(v[i].parent)];
    p.flops += v[i].flops;
    p.weight_bytes += v[i].weight_bytes;
    p.input_bytes += v[i].input_bytes;
    p.output_bytes += v[i].output_bytes;
  }
}

}  // namespace

std::vector<LayerCost> gpt2_layer_costs(const GPT2Config& cfg, int B, int T, Precision precision, bool gelu_kernel,
                                        bool f16_attention) {
  const double es = element_bytes(precision);
  const double ea = f16_attention ? 2.0 : es;  // the attention's elements (fp16 around tf32's fp16 core)
  const double N = double(B) * T, C = cfg.n_embd, V = cfg.vocab_size;
  std::vector<LayerCost> v;
  // wte: the N gathered token rows and T position rows, the token ids (int32), the sum.
  LayerCost wte = streaming_cost("wte", "", "embedding", 0, N * C, N * C + T * C, es);
  wte.input_bytes = N * sizeof(int32_t);
  v.push_back(wte);
  for (int i = 0; i < cfg.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i), attn = h + ".attn", mlp = h + ".mlp";
    v.push_back(composite(h, ""));
    LayerCost ln_1 = streaming_cost(h + ".ln_1", h, "norm", N * C, N * C, 2 * C, es);
    ln_1.output_bytes = N * C * ea;
    v.push_back(ln_1);
    v.push_back(composite(attn, h));
    LayerCost c_attn = linear_cost(attn + ".c_attn", attn, N, C, 3 * C, true, false, ea);
    LayerCost core = streaming_cost(attn + ".core", attn, "attention", N * 3 * C, N * C, 0, ea);
    core.flops = 2 * (2 * double(B) * T * T * C);  // Q·Kᵀ and P·V over the full T×T square
    LayerCost c_proj = linear_cost(attn + ".c_proj", attn, N, C, C, true, true, es);  // += the residual stream
    if (f16_attention) {
      c_proj.weight_bytes = C * C * ea + C * es;  // fp16 weight, fp32 bias
      c_proj.input_bytes = N * C * ea + N * C * es;  // the fp16 heads, the fp32 residual
      c_attn.precision = core.precision = c_proj.precision = "fp16";
    }
    v.push_back(c_attn);
    v.push_back(core);
    v.push_back(c_proj);
    v.push_back(streaming_cost(h + ".ln_2", h, "norm", N * C, N * C, 2 * C, es));
    v.push_back(composite(mlp, h));
    v.push_back(linear_cost(mlp + ".c_fc", mlp, N, C, 4 * C, true, false, es));
    if (gelu_kernel) v.push_back(streaming_cost(mlp + ".gelu", mlp, "elementwise", N * 4 * C, N * 4 * C, 0, es));
    v.push_back(linear_cost(mlp + ".c_proj", mlp, N, 4 * C, C, true, true, es));
  }
  v.push_back(streaming_cost("ln_f", "", "norm", N * C, N * C, 2 * C, es));
  v.push_back(linear_cost("lm_head", "", N, C, V, false, false, es));  // tied to wte, no bias
  sum_composites(v);
  return v;
}

LayerCost conv_layer_cost(const ConvLayerInfo& info, int B, Precision precision, bool residual) {
  const double es = element_bytes(precision);
  const ConvShape& s = info.shape;
  // The input pixels the windows touch: all of them unless the kernel is narrower than the
  // stride (a 1×1 stride-2 downsample reads one pixel in four, whole 16-byte channel runs).
  const double touched = std::min(info.in_size, info.out_size * s.kernel);
  const double out_px = double(B) * info.out_size * info.out_size, in_px = double(B) * touched * touched;
  const size_t dot = info.name.rfind('.');
  LayerCost c{info.name, dot == std::string::npos ? "" : info.name.substr(0, dot), "conv"};
  c.flops = 2 * out_px * s.out_channels * double(s.in_channels) * s.kernel * s.kernel;
  c.weight_bytes = (double(s.weight_count()) + s.out_channels) * es;  // folded weights and bias
  c.input_bytes = (in_px * s.in_channels + (residual ? out_px * s.out_channels : 0)) * es;
  c.output_bytes = out_px * s.out_channels * es;
  return c;
}

std::vector<LayerCost> resnet50_layer_costs(const ResNetConfig& cfg, const std::vector<ConvLayerInfo>& convs, int B,
                                            Precision precision, StemKind stem) {
  require(!convs.empty() && convs[0].name == "conv1", "resnet50_layer_costs needs the convolutions, stem first.");
  const double es = element_bytes(precision);
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::vector<LayerCost> v{conv_layer_cost(convs[0], B, precision, false)};
  const double stem_c = convs[0].shape.out_channels, s1 = convs[0].out_size, s2 = MaxPool::out_size(convs[0].out_size);
  if (stem == StemKind::Fused)
    v.back().output_bytes = B * s2 * s2 * stem_c * es;  // the pooled output; no maxpool range
  else
    v.push_back(streaming_cost("maxpool", "", "pool", B * s1 * s1 * stem_c, B * s2 * s2 * stem_c, 0, es));
  int last_size = static_cast<int>(s2);
  for (size_t i = 1; i < convs.size(); ++i) {
    LayerCost c = conv_layer_cost(convs[i], B, precision, ends_with(convs[i].name, ".conv3"));  // conv3 adds the shortcut
    if (v.back().name != c.parent && v.back().parent != c.parent) v.push_back(composite(c.parent, ""));
    if (ends_with(c.name, ".conv3")) last_size = convs[i].out_size;
    v.push_back(std::move(c));
  }
  const double F = cfg.features(), px = double(last_size) * last_size;
  v.push_back(streaming_cost("avgpool", "", "pool", B * px * F, B * F, 0, es));
  v.push_back(linear_cost("fc", "", B, F, cfg.num_classes, true, false, es));
  sum_composites(v);
  return v;
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
