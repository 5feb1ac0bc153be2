// Model input for ResNet: images arrive as PyTorch takes them, fp32 NCHW [N, 3, H, W];
// laptime's convolutions read NHWC in the run's storage type. One kernel does both the
// transpose and the conversion.
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out: [N, H, W, C] of `dtype` (F32 or BF16); in: [N, C, H, W] fp32.
void nchw_f32_to_nhwc(DType dtype, void* out, const float* in, int N, int C, int H, int W, cudaStream_t stream);

}  // namespace laptime
