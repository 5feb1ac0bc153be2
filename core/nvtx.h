// NVTX: one domain ("laptime"), ranges as RAII, gated by a level so that `--nvtx none`
// costs one integer compare per layer.
//
// Range names are the weight-name prefixes (`h.3.attn`, `layer2.1.conv2`) so that a range
// in the timeline maps to a tensor in the weights file. Names are registered once
// (nvtxDomainRegisterStringA) at layer construction; pushing a registered string is cheaper
// than copying a char* on every iteration.
#pragma once

#include <cstdint>
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace laptime {

// Coarsest to finest. A range is emitted when its level <= the context's level.
enum class NvtxLevel { None = 0, Iter = 1, Block = 2, Layer = 3 };

const char* nvtx_level_name(NvtxLevel l);

// Categories for iteration ranges, so tools can tell warm-up from steady state.
enum class NvtxCategory : uint32_t { None = 0, Warmup = 1, Steady = 2 };

nvtxDomainHandle_t nvtx_domain();

// A range name registered with the laptime domain.
class NvtxName {
 public:
  NvtxName() = default;
  explicit NvtxName(std::string name);
  const std::string& str() const { return name_; }
  nvtxStringHandle_t handle() const { return handle_; }

 private:
  std::string name_;
  nvtxStringHandle_t handle_ = nullptr;
};

class Context;

// The range of one layer, block or iteration. Pushes `name` when `level` is enabled by the
// context's NVTX level. At the end of a layer-level range it also runs the context's
// layer-end hook when one is set (Context::set_layer_end_hook: the bench's `--pitfall sync`).
class NvtxRange {
 public:
  NvtxRange(const Context& ctx, NvtxLevel level, const NvtxName& name);
  // Iteration range: carries the iteration index as a uint64 payload and a category.
  NvtxRange(const Context& ctx, NvtxLevel level, const NvtxName& name, uint64_t payload, NvtxCategory category);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  const Context& ctx_;
  NvtxLevel level_;
  bool pushed_ = false;
};

}  // namespace laptime
