// cuDNN's fused causal attention (scaled dot-product attention) through cudnn-frontend's
// graph API, for the bf16 attention core of GPT-2: reads q, k and v straight out of the QKV
// projection's [B, T, 3C] output through strides, and writes the merged heads [B, T, C] the
// output projection reads. No T x T buffer, no split or merge kernels.
//
// The graph is described, checked and its plan built in build() (model build); run() only
// enqueues it on the stream the context's cuDNN handle is bound to.
//
// CudnnSdpaFp8: the same attention with e4m3 q, k, v and output (cuDNN's fp8 flash attention,
// Hopper and newer; bench/sdpa_probe.cpp measures it before any model uses it). Per-tensor scales, device
// scalars: the qkv tensor's (q = s_qkv·q8, likewise k and v) and the output's inverse (the
// consumer's: out8 = e4m3(heads / s_out)); the probabilities P are held in e4m3 at P·448 (P ≤ 1),
// so each attention weight carries e4m3's 2^-4 relative rounding.
#pragma once

#include <memory>
#include <string>

#include "core/context.h"
#include "core/dtype.h"

namespace laptime {

class CudnnSdpaFp8 {
 public:
  CudnnSdpaFp8();
  ~CudnnSdpaFp8();
  CudnnSdpaFp8(CudnnSdpaFp8&&) noexcept;
  CudnnSdpaFp8& operator=(CudnnSdpaFp8&&) noexcept;

  // As CudnnSdpa::build, for e4m3 storage. False, with cuDNN's reason, where it cannot run (a GPU
  // before Hopper, a cuDNN without fp8 attention, a head size it lacks).
  bool build(Context& ctx, int B, int T, int H, int hd, std::string* why);
  // out8: [B, T, H·hd] e4m3; qkv8: [B, T, 3·H·hd] e4m3; qkv_scale: s_qkv, out_inv_scale: 1/s_out
  // (device floats). Throws Error when cuDNN fails at execution.
  void run(const Context& ctx, void* out8, const void* qkv8, const float* qkv_scale, const float* out_inv_scale) const;
  const std::string& engine() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

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
