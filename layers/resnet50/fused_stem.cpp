#include "layers/resnet50/fused_stem.h"

#include "core/check.h"

namespace laptime {

FusedStem::FusedStem(const DeviceWeights& w, const std::string& name, int out_channels, int version)
    : name_(name),
      out_channels_(out_channels),
      version_(version),
      weight_(w.get(name + ".weight")),
      bias_(w.get(name + ".bias")) {
  require(w.dtype() == DType::BF16, "internal: the fused stem's weights must be bf16.");
}

void FusedStem::prepare(const Context& ctx, int N, int Hs) {
  if (version_ < 0) {
    plans_[{N, Hs}] = fused_stem_plan(N, Hs, out_channels_, ctx.device());
    return;
  }
  const std::string why = lab::stem_refusal(version_, Hs, out_channels_, ctx.device());
  require(why.empty(), "--kernel stem=v" + std::to_string(version_ + 1) + ": " + why);
  plans_[{N, Hs}] = lab::stem_plan(version_, N, Hs, out_channels_, ctx.device());
}

const FusedStemPlan& FusedStem::plan(int N, int Hs) const {
  auto it = plans_.find({N, Hs});
  if (it == plans_.end())  // `if`, not require(): no message built on every call
    throw Error("internal: " + name() + " (fused stem) was not prepared for batch " + std::to_string(N) + " at side " +
                std::to_string(Hs) + ".");
  return it->second;
}

void FusedStem::forward(const Context& ctx, void* y, const void* x, int N, int Hs, const float* y_inv_scale) const {
  const FusedStemPlan& p = plan(N, Hs);
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  if (version_ >= 0) {  // a lab version, swapped in (bf16 output only: check_kernel_choice)
    require(y_inv_scale == nullptr, "internal: the lab's stem versions write bf16, not e4m3.");
    lab::stem_version(version_)({y, x, weight_, bias_, N, Hs, out_channels_, &p}, ctx.stream());
    return;
  }
  fused_stem_forward(y, x, weight_, bias_, N, Hs, out_channels_, p, ctx.stream(), y_inv_scale);
}

std::string FusedStem::describe(int N, int Hs) const {
  const FusedStemPlan& p = plan(N, Hs);
  if (version_ == 0) return "fused kernel (conv + bias + ReLU + max pool), laptime lab's stem v1: direct, CUDA cores";
  return std::string("fused kernel (conv + bias + ReLU + max pool, ") + fused_stem_core_name(p.core) + " bf16" +
         (version_ > 0 ? ", --kernel stem=v" + std::to_string(version_ + 1) : std::string()) +
         "): " + std::to_string(p.bands) + " band(s) of " + std::to_string(p.band_rows) + " pooled rows per image, " +
         std::to_string(p.grid) + " blocks, " + std::to_string(p.smem_bytes / 1024) + " KB shared memory each";
}

}  // namespace laptime
