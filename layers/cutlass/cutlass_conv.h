// CUTLASS's Hopper implicit-GEMM convolutions (fprop, NHWC): the e4m3 3×3 convolution of ResNet-50's
// e4m3 stream (layers/resnet50/e4m3_block.h), which cuDNN 9.19 runs slower in fp8 than in bf16 on every
// ResNet-50 shape (docs/history/fp8.md). Host C++ face; the kernels are conv_* rows of layers/cutlass/cutlass.cmake's
// table, sm_90a.
//
// What every kernel computes, on e4m3 x [N, H, W, C] (real value s_a · x) and e4m3 w [K, R, R, C]
// (KRSC, real value s_b · w), zero padding, fp32 accumulation in the tensor cores (no promotion):
//   y = e4m3(relu(s_a · s_b · conv(x, w) + bias) · d_scale), saturated to ±448;  y [N, Ho, Wo, K]
// The im2col is TMA's (cp.async.bulk.tensor in im2col mode): no unfolded copy in memory. CUTLASS 4.2
// runs sm90 convolutions without a persistent scheduler: one CTA a tile, one consumer warpgroup.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "layers/cutlass/cutlass_gemm.h"

namespace laptime {

struct CutlassConvArgs {
  int N = 0, H = 0, W = 0, C = 0;  // x [N, H, W, C]
  int K = 0, R = 0;                // w [K, R, R, C]
  int stride = 1, pad = 0;
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;               // [N, Ho, Wo, K] e4m3
  const void* bias = nullptr;      // [K] bf16
  const float* a_scale = nullptr;  // device scalars; nullptr: 1
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
};

class CutlassConvKernel {
 public:
  virtual ~CutlassConvKernel() = default;
  virtual std::string name() const = 0;  // "fp8 conv 128x128x128, ReLU+bias -> e4m3"
  // "" when the kernel can run these arguments; else why not. Pointers may be null here.
  virtual std::string refusal(const CutlassConvArgs& args) const = 0;
  virtual std::size_t workspace_bytes(const CutlassConvArgs& args) const = 0;
  // Enqueues y on `stream` (the launch parameters prepared once per arguments, in `cache`).
  virtual void run(const CutlassConvArgs& args, CutlassLaunchCache& cache, void* workspace, std::size_t workspace_bytes,
                   cudaStream_t stream) const = 0;
};

// The convolution kernels this build holds that run on `device` (compute capability 9.0, and
// LAPTIME_CUTLASS not off); every one it compiled, whatever the GPU.
std::vector<const CutlassConvKernel*> cutlass_conv_kernels(int device);
std::vector<const CutlassConvKernel*> cutlass_built_conv_kernels();

}  // namespace laptime
