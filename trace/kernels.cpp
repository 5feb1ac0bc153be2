#include "trace/kernels.h"

#include <algorithm>
#include <map>

#include "trace/text_util.h"

namespace laptime::trace {

using detail::has;
using detail::has_any;
using detail::lower;

const char* category_name(Category c) {
  switch (c) {
    case Category::Gemm: return "GEMM";
    case Category::Convolution: return "convolution";
    case Category::Attention: return "attention";
    case Category::Normalization: return "normalization";
    case Category::Elementwise: return "elementwise";
    case Category::ReductionPooling: return "reduction/pooling";
    case Category::MemcpyMemset: return "memcpy/memset";
    case Category::Other: return "other";
  }
  return "other";
}

namespace {

// "conv" as in convolution, not as in convert/conversion (laptime's own convert_kernel).
bool has_conv(const std::string& s) {
  for (size_t p = s.find("conv"); p != std::string::npos; p = s.find("conv", p + 1)) {
    const std::string next = s.substr(p + 4, 3);
    if (next != "ert" && next != "ers") return true;
  }
  return false;
}

std::string last_component(const std::string& range) {
  const size_t dot = range.rfind('.');
  return lower(dot == std::string::npos ? range : range.substr(dot + 1));
}

}  // namespace

Category classify_kernel(const std::string& short_name, const std::string& name,
                         const std::vector<std::string>& ranges_innermost_first) {
  const std::string s = lower(short_name), d = lower(name);
  // 1. Library kernels say what they are. Attention first: fused attention kernels also
  //    carry "cutlass"/"fprop" in their names (fmha_cutlassF_*, cudnn *_sdpa_*_fprop_*).
  if (has_any(s, {"flash", "fmha", "attention", "sdpa", "mha_"})) return Category::Attention;
  if (has_conv(s) || has_any(s, {"fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "fft2d"}))
    return Category::Convolution;
  if (has_any(s, {"gemm", "gemv", "nvjet", "cutlass", "cublas", "matmul", "splitkreduce", "xmma"}) ||
      has_any(d, {"cutlass", "cublas", "gemm"}))
    return Category::Gemm;
  // 2. The layer it was launched from: what is not a GEMM inside an attention layer is
  //    attention (the softmax, the head split/merge); anything inside a norm layer is
  //    normalization, inside a convolution layer convolution (cuDNN's padding and layout
  //    kernels), inside a pooling layer pooling. The innermost range with a rule wins.
  for (const std::string& r : ranges_innermost_first) {
    const std::string c = last_component(r);
    if (has_any(c, {"attn", "attention"})) return Category::Attention;
    if (c.rfind("ln", 0) == 0 || has(c, "norm") || (c.rfind("bn", 0) == 0 && c.size() <= 4))
      return Category::Normalization;
    if (has_conv(c) || has(c, "downsample")) return Category::Convolution;
    if (has(c, "pool")) return Category::ReductionPooling;
  }
  // 3. Generic kernels by their own names.
  if (has_any(s, {"layernorm", "layer_norm", "rmsnorm", "rms_norm", "batchnorm", "batch_norm", "groupnorm",
                  "group_norm", "instancenorm", "instance_norm", "bn_fw"}))
    return Category::Normalization;
  if (has_any(s, {"pool", "reduce", "reduction", "softmax", "argmax", "argmin", "topk"}))
    return Category::ReductionPooling;
  if (has_any(s, {"elementwise", "gelu", "relu", "silu", "swish", "tanh", "sigmoid", "residual", "add", "bias",
                  "scale", "mul", "cast", "convert", "copy", "fill", "embedding", "encoder", "gather", "scatter",
                  "transpose", "permute", "split", "merge", "concat", "cat_", "index", "dropout", "where", "clamp"}))
    return Category::Elementwise;
  return Category::Other;
}

void kernel_mix(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of, Analysis& a) {
  const Trace& t = j.trace();
  std::map<Category, CategoryRow> cats;
  for (int c = 0; c < kCategoryCount; ++c) cats[static_cast<Category>(c)].category = static_cast<Category>(c);
  std::map<std::pair<std::string, Category>, KernelRow> kernels;
  std::map<std::string, RangeRow> ranges, patterns;
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    if (!a.iterations[i].steady()) continue;
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      const Ns d = op.end - op.start;
      a.gpu_time += d;
      CategoryRow& c = cats[op.category];
      ++c.count;
      c.time += d;
      KernelRow& kr = kernels[{op.label, op.category}];
      if (kr.count == 0) {
        kr.name = op.label;
        kr.category = op.category;
        kr.min = d;
      }
      ++kr.count;
      kr.time += d;
      kr.min = std::min(kr.min, d);
      kr.max = std::max(kr.max, d);
      const std::string rname = detail::range_text(t, op.range);
      for (auto* table : {&ranges, &patterns}) {
        const std::string key = table == &ranges ? rname : detail::fold_indices(rname);
        RangeRow& rr = (*table)[key];
        rr.range = key;
        ++rr.count;
        rr.time += d;
        rr.time_by_category[static_cast<int>(op.category)] += d;
      }
      if (op.kind == GpuOp::Kind::Memcpy && t.memcpys[op.index].kind == CopyKind::HtoD) a.htod_time += d;
    }
  }
  for (auto& [c, row] : cats) a.categories.push_back(row);
  std::stable_sort(a.categories.begin(), a.categories.end(), [](const CategoryRow& x, const CategoryRow& y) { return x.time > y.time; });
  for (auto& [key, row] : kernels) a.kernels.push_back(row);
  std::stable_sort(a.kernels.begin(), a.kernels.end(), [](const KernelRow& x, const KernelRow& y) { return x.time > y.time; });
  for (auto* table : {&ranges, &patterns}) {
    std::vector<RangeRow>& out = table == &ranges ? a.ranges : a.range_patterns;
    for (auto& [key, row] : *table) out.push_back(row);
    std::stable_sort(out.begin(), out.end(), [](const RangeRow& x, const RangeRow& y) { return x.time > y.time; });
  }
}

}  // namespace laptime::trace
