// cuDNN's fused causal attention (scaled dot-product attention) through cudnn-frontend's
// graph API, for the bf16 attention core of GPT-2: reads q, k and v straight out of the QKV
// projection's [B, T, 3C] output through strides, and writes the merged heads [B, T, C] the
// output projection reads. No T x T buffer, no split or merge kernels.
//
// The graph is described, checked and its plan built in build() (model build); run() only
// enqueues it on the stream the context's cuDNN handle is bound to.
#pragma once

#include <memory>
#include <string>

#include "core/context.h"
#include "core/dtype.h"

namespace laptime {

class CudnnSdpa {
 public:
  CudnnSdpa();
  ~CudnnSdpa();
  CudnnSdpa(CudnnSdpa&&) noexcept;
  CudnnSdpa& operator=(CudnnSdpa&&) noexcept;

  // Builds the plan for B sequences of T positions, H heads of size hd, storage `dtype`
  // (cuDNN's fused attention takes BF16 or F16 only). Reserves its workspace on `ctx` and
  // runs it once on scratch buffers, so that whatever cuDNN would refuse at execution is
  // found here. False, with cuDNN's reason in *why, when it cannot run this case.
  bool build(Context& ctx, int B, int T, int H, int hd, DType dtype, std::string* why);

  // out: [B, T, H·hd]; qkv: [B, T, 3·H·hd] (q | k | v, each (head, dim)). Throws Error when
  // cuDNN fails at execution.
  void run(const Context& ctx, void* out, const void* qkv) const;

  // cuDNN's name of the chosen engine (for notes and logs).
  const std::string& engine() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace laptime
