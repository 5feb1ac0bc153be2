// ResNet's stem — a 7×7 stride-2 convolution with padding 3 on 3 colour channels — rewritten as
// a 4×4 stride-1 unpadded convolution on the image's 2×2 space-to-depth transform.
//
//   out[ho, wo, o] = Σ_{r,q<7, c} w[o, r, q, c] · x_pad[2ho + r, 2wo + q, c]
//   with r = 2a + dy, q = 2b + dx (a, b < 4; dy, dx < 2):
//                  = Σ_{a,b<4, (dy,dx,c)} w'[o, a, b, (2dy + dx)·C + c] · s2d[ho + a, wo + b, (2dy + dx)·C + c]
//   where s2d[i, j, (2dy + dx)·C + c] = x_pad[2i + dy, 2j + dx, c], and w' is w zero-padded to 8×8.
//
// Why: with 3 channels a pixel is 6 bytes (bf16); cuDNN has no Hopper kernel for it, padded
// the input on every call and ran an sm80 "indexed" implicit GEMM at ~17 TFLOP/s (1.73 ms of a
// 7.95 ms lap at B256). The transform gives 12 channels (zero-padded to 16 bytes' worth: 16 in
// bf16, 12 in fp32), a 4×4 kernel and stride 1, which cuDNN's tensor-core kernels take directly.
// The image arrives in upload_input() anyway, so the transform rides in that one kernel
// (kernels/image.cu, nchw_f32_to_s2d) and costs the forward pass nothing. The extra FLOPs (16·16
// per output against 49·3, zeros included) run on tensor cores that were idle.
#pragma once

#include <vector>

#include "core/dtype.h"
#include "layers/resnet50/conv2d.h"

namespace laptime {

struct SpaceToDepthStem {
  int in_channels = 3;      // C, the image's
  int kernel = 7;           // k of the original convolution (stride 2)
  int pad = 3;              // its padding, applied by the transform
  int stored_channels = 0;  // Cs >= 4·C: the transform's channels, zero-padded to 16 bytes a pixel

  int s2d_kernel() const { return (kernel + 1) / 2; }                   // 4 for 7
  int out_size(int S) const { return (S + 2 * pad - kernel) / 2 + 1; }  // the stem's output side
  int side(int S) const { return out_size(S) + s2d_kernel() - 1; }      // the transform's side (115 for 224)
  // The equivalent convolution: Cs → out_channels, s2d_kernel()², stride 1, no padding.
  ConvShape conv(int out_channels) const { return ConvShape{stored_channels, out_channels, s2d_kernel(), 1, 0}; }
};

// The rewrite of `stem` (stride 2 required) for activations of `dtype`.
SpaceToDepthStem space_to_depth_stem(const ConvShape& stem, DType dtype);

// w: [K, k, k, C] (KRSC, BatchNorm folded) → [K, k', k', Cs] as in the comment above.
std::vector<float> space_to_depth_weight(const SpaceToDepthStem& s, const std::vector<float>& w, int K);

}  // namespace laptime
