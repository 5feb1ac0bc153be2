// ResNet's stem as one kernel (kernels/stem.cu): the 4×4 stride-1 convolution on the image's
// space-to-depth transform (layers/resnet50/space_to_depth.h), + bias, ReLU and the 3×3 stride-2 max
// pool, bf16. One NVTX range, named like the convolution (`conv1`): the pool has no range of
// its own, its time is inside conv1's (the per-layer costs count conv1's FLOPs, its input and
// the pooled output, and no `maxpool` entry: ResNet50::layer_costs).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "core/context.h"
#include "core/nvtx.h"
#include "kernels/lab/launch.cuh"
#include "kernels/stem.cuh"
#include "layers/device_weights.h"

namespace laptime {

class FusedStem {
 public:
  // Reads `<name>.weight` [out, 4, 4, 16] (the s2d weight, BatchNorm folded) and `<name>.bias`
  // [out] from `w`, which must hold bf16. fused_stem_refusal() says which cases run. `version`:
  // laptime lab's version of kernel `stem` to run (0 for v1: kernels/lab/stem.cu), -1 for
  // production (FusedStemCore::Auto: wgmma where it runs, else mma.sync).
  FusedStem(const DeviceWeights& w, const std::string& name, int out_channels, int version = -1);

  // Build time, once per batch N at s2d side Hs: the shared-memory opt-in and the cut of the
  // work over the SMs (no device work, no allocation). Throws a sentence when the case cannot run.
  void prepare(const Context& ctx, int N, int Hs);
  bool prepared(int N, int Hs) const { return plans_.count({N, Hs}) > 0; }

  // y: [N, Po, Po, out], Po = pool_out_size(Hs − 3, 3, 2, 1); x: [N, Hs, Hs, 16]. 16-byte aligned.
  // y_inv_scale non-null: y is e4m3, quantized with it in the kernel (fp8's e4m3 stream).
  void forward(const Context& ctx, void* y, const void* x, int N, int Hs, const float* y_inv_scale = nullptr) const;

  const std::string& name() const { return name_.str(); }
  int out_channels() const { return out_channels_; }
  // One line: the kernel, its cut of the work (bands per image, blocks) and shared memory.
  std::string describe(int N, int Hs) const;

 private:
  const FusedStemPlan& plan(int N, int Hs) const;

  NvtxName name_;
  int out_channels_;
  int version_;
  const void* weight_;                                  // [out, 4, 4, 16] bf16
  const void* bias_;                                    // [out] bf16
  std::map<std::pair<int, int>, FusedStemPlan> plans_;  // by (N, Hs)
};

}  // namespace laptime
