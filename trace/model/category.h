// What kind of work a kernel is (GEMM, convolution, attention, ...), from its names and the
// NVTX ranges its launch sat in. Below the join (every GpuOp carries its category) so that
// the kernel mix, the timeline colours and any reader of kernel-level reports (Nsight
// Compute) classify alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laptime::trace {

enum class Category : uint8_t {
  Gemm,
  Convolution,
  Attention,
  Normalization,
  Elementwise,
  ReductionPooling,
  MemcpyMemset,
  Other
};
constexpr int kCategoryCount = 8;
const char* category_name(Category c);

// The rules, in order: library kernels say what they are (attention before convolution and
// GEMM: fused attention kernels carry "cutlass"/"fprop" too); then the innermost enclosing
// range with a rule (a non-GEMM kernel under `h.3.attn` is attention, one under a norm layer
// normalization, ...); then generic kernel names. Copies and memsets are MemcpyMemset, set by
// the join.
Category classify_kernel(const std::string& short_name, const std::string& name,
                         const std::vector<std::string>& ranges_innermost_first);

// The three rules one by one, so the join applies each once per distinct name (a million
// kernels of twelve names are classified twelve times): the library's name, the enclosing
// range's name, the kernel's generic name.
std::optional<Category> category_by_library_name(const std::string& short_name, const std::string& name);
std::optional<Category> category_by_range(const std::string& range);
Category category_by_generic_name(const std::string& short_name);

}  // namespace laptime::trace
