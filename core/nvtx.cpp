#include "core/nvtx.h"

#include "core/context.h"

namespace laptime {

const char* nvtx_level_name(NvtxLevel l) {
  switch (l) {
    case NvtxLevel::None:
      return "none";
    case NvtxLevel::Iter:
      return "iter";
    case NvtxLevel::Block:
      return "block";
    case NvtxLevel::Layer:
      return "layer";
  }
  return "?";
}

nvtxDomainHandle_t nvtx_domain() {
  // The NVTX domain is process-wide by nature; created on first use and never destroyed
  // (destroying it at exit races with tools that flush at exit).
  static nvtxDomainHandle_t domain = [] {
    nvtxDomainHandle_t d = nvtxDomainCreateA("laptime");
    nvtxDomainNameCategoryA(d, static_cast<uint32_t>(NvtxCategory::Warmup), "warmup");
    nvtxDomainNameCategoryA(d, static_cast<uint32_t>(NvtxCategory::Steady), "steady");
    return d;
  }();
  return domain;
}

NvtxName::NvtxName(std::string name) : name_(std::move(name)) {
  handle_ = nvtxDomainRegisterStringA(nvtx_domain(), name_.c_str());
}

namespace {
nvtxEventAttributes_t attributes(const NvtxName& name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  if (name.handle()) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name.handle();
  } else {
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.str().c_str();
  }
  return a;
}
}  // namespace

NvtxRange::NvtxRange(const Context& ctx, NvtxLevel level, const NvtxName& name) : ctx_(ctx), level_(level) {
  if (static_cast<int>(level) > static_cast<int>(ctx.nvtx_level())) return;
  nvtxEventAttributes_t a = attributes(name);
  nvtxDomainRangePushEx(nvtx_domain(), &a);
  pushed_ = true;
}

NvtxRange::NvtxRange(const Context& ctx, NvtxLevel level, const NvtxName& name, uint64_t payload, NvtxCategory category)
    : ctx_(ctx), level_(level) {
  if (static_cast<int>(level) > static_cast<int>(ctx.nvtx_level())) return;
  nvtxEventAttributes_t a = attributes(name);
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = payload;
  a.category = static_cast<uint32_t>(category);
  nvtxDomainRangePushEx(nvtx_domain(), &a);
  pushed_ = true;
}

NvtxRange::~NvtxRange() {
  if (level_ == NvtxLevel::Layer && ctx_.layer_end_hook()) ctx_.layer_end_hook()();
  if (pushed_) nvtxDomainRangePop(nvtx_domain());
}

}  // namespace laptime
