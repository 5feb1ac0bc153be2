#include "layers/fused_stem.h"

#include "core/check.h"

namespace laptime {

FusedStem::FusedStem(const DeviceWeights& w, const std::string& name, int out_channels)
    : name_(name),
      out_channels_(out_channels),
      weight_(w.get(name + ".weight")),
      bias_(w.get(name + ".bias")) {
  require(w.dtype() == DType::BF16, "internal: the fused stem's weights must be bf16.");
}

void FusedStem::prepare(const Context& ctx, int N, int Hs) {
  plans_[{N, Hs}] = fused_stem_plan(N, Hs, out_channels_, ctx.device());
}

const FusedStemPlan& FusedStem::plan(int N, int Hs) const {
  auto it = plans_.find({N, Hs});
  if (it == plans_.end())  // `if`, not require(): no message built on every call
    throw Error("internal: " + name() + " (fused stem) was not prepared for batch " + std::to_string(N) +
                " at side " + std::to_string(Hs) + ".");
  return it->second;
}

void FusedStem::forward(const Context& ctx, void* y, const void* x, int N, int Hs, const float* y_inv_scale) const {
  const FusedStemPlan& p = plan(N, Hs);
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  fused_stem_forward(y, x, weight_, bias_, N, Hs, out_channels_, p, ctx.stream(), y_inv_scale);
}

std::string FusedStem::describe(int N, int Hs) const {
  const FusedStemPlan& p = plan(N, Hs);
  return "fused kernel (conv + bias + ReLU + max pool, mma.sync bf16): " + std::to_string(p.bands) +
         " band(s) of " + std::to_string(p.band_rows) + " pooled rows per image, " + std::to_string(p.grid) +
         " blocks, " + std::to_string(p.smem_bytes / 1024) + " KB shared memory each";
}

}  // namespace laptime
