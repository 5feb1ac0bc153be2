#include "trace/model/category.h"

#include <optional>

#include "core/os.h"
#include "trace/model/format.h"

namespace laptime::trace {

using detail::has;
using detail::has_any;
using detail::lower;

const char* category_name(Category c) {
  switch (c) {
    case Category::Gemm:
      return "GEMM";
    case Category::Convolution:
      return "convolution";
    case Category::Attention:
      return "attention";
    case Category::Normalization:
      return "normalization";
    case Category::Elementwise:
      return "elementwise";
    case Category::ReductionPooling:
      return "reduction/pooling";
    case Category::MemcpyMemset:
      return "memcpy/memset";
    case Category::Other:
      return "other";
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

std::optional<Category> category_by_library_name(const std::string& short_name, const std::string& name) {
  const std::string s = lower(short_name), d = lower(name);
  // 1. Library kernels say what they are. Attention first: fused attention kernels also
  //    carry "cutlass"/"fprop" in their names (fmha_cutlassF_*, cudnn *_sdpa_*_fprop_*).
  if (has_any(s, {"flash", "fmha", "attention", "sdpa", "mha_"})) return Category::Attention;
  if (has_conv(s) || has_any(s, {"fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "fft2d"}))
    return Category::Convolution;
  // bmm_: TensorRT-LLM's generated batched matmuls (bmm_E4m3_..._swiGlu_..._sm100f), whose fused
  // activation would otherwise read as elementwise.
  if (has_any(s, {"gemm", "gemv", "nvjet", "cutlass", "cublas", "matmul", "splitkreduce", "xmma"}) ||
      starts_with(s, "bmm_") || has_any(d, {"cutlass", "cublas", "gemm"}))
    return Category::Gemm;
  return std::nullopt;
}

std::optional<Category> category_by_range(const std::string& range) {
  // 2. The layer it was launched from: what is not a GEMM inside an attention layer is
  //    attention (the softmax, the head split/merge); anything inside a norm layer is
  //    normalization, inside a convolution layer convolution (cuDNN's padding and layout
  //    kernels), inside a pooling layer pooling.
  const std::string c = last_component(range);
  if (has_any(c, {"attn", "attention"})) return Category::Attention;
  if (starts_with(c, "ln") || has(c, "norm") || (starts_with(c, "bn") && c.size() <= 4)) return Category::Normalization;
  if (has_conv(c) || has(c, "downsample")) return Category::Convolution;
  if (has(c, "pool")) return Category::ReductionPooling;
  return std::nullopt;
}

Category category_by_generic_name(const std::string& short_name) {
  // 3. Generic kernels by their own names.
  const std::string s = lower(short_name);
  if (has_any(s, {"layernorm", "layer_norm", "rmsnorm", "rms_norm", "batchnorm", "batch_norm", "groupnorm",
                  "group_norm", "instancenorm", "instance_norm", "bn_fw"}))
    return Category::Normalization;
  if (has_any(s, {"pool", "reduce", "reduction", "softmax", "argmax", "argmin", "topk"}))
    return Category::ReductionPooling;
  if (has_any(s, {"elementwise", "gelu",    "relu",   "silu",    "swish",     "tanh",    "sigmoid", "residual",
                  "add",         "bias",    "scale",  "mul",     "cast",      "convert", "copy",    "fill",
                  "embedding",   "encoder", "gather", "scatter", "transpose", "permute", "split",   "merge",
                  "concat",      "cat_",    "index",  "dropout", "where",     "clamp"}))
    return Category::Elementwise;
  return Category::Other;
}

Category classify_kernel(const std::string& short_name, const std::string& name,
                         const std::vector<std::string>& ranges_innermost_first) {
  if (auto c = category_by_library_name(short_name, name)) return *c;
  for (const std::string& r : ranges_innermost_first)  // the innermost range with a rule wins
    if (auto c = category_by_range(r)) return *c;
  return category_by_generic_name(short_name);
}

}  // namespace laptime::trace
