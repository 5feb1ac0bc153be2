// Model input for ResNet: images arrive as PyTorch takes them, fp32 NCHW [N, 3, H, W];
// laptime's convolutions read NHWC in the run's storage type. One kernel does the transpose,
// the conversion, and the zero padding of the channels that the stem convolution reads
// (layers/resnet50/conv2d.h, stored_in_channels).
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out: [N, H, W, C_out] of `dtype` (F32 or BF16), channels C .. C_out-1 zero; in: [N, C, H, W]
// fp32; C_out >= C.
void nchw_f32_to_nhwc(DType dtype, void* out, const float* in, int N, int C, int H, int W, int C_out,
                      cudaStream_t stream);

// The stem's space-to-depth input (layers/resnet50/space_to_depth.h): out: [N, Hs, Ws, C_out] of `dtype`,
//   out[n, i, j, (2dy + dx)·C + c] = in[n, c, 2i + dy − pad, 2j + dx − pad], zero outside the image,
// channels 4·C .. C_out-1 zero; in: [N, C, H, W] fp32; C_out >= 4·C.
void nchw_f32_to_s2d(DType dtype, void* out, const float* in, int N, int C, int H, int W, int pad, int Hs, int Ws,
                     int C_out, cudaStream_t stream);

}  // namespace laptime
