// The epilogue of a convolution with folded BatchNorm, for when cuDNN cannot fuse it into
// the convolution call itself (layers/resnet50/conv2d.h, ConvRoute::Separate):
//   y = act(y + bias[c] (+ residual))
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

enum class ConvActivation { None, Relu };

// y: [rows, C] of `dtype`, updated in place (rows = N·H·W of an NHWC tensor); bias: [C];
// residual: [rows, C] or nullptr. All of `dtype` (F32 or BF16); the sum is formed in fp32.
void conv_epilogue_forward(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C,
                           ConvActivation act, cudaStream_t stream);
// The same with the general kernel alone (one element a thread-step, grid-stride):
// conv_epilogue_forward's fallback, laptime lab's conv_epilogue v2.
void conv_epilogue_forward_general(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C,
                                   ConvActivation act, cudaStream_t stream);

}  // namespace laptime
