// A bottleneck block's projection shortcut folded into its conv3 (layers/resnet50/bottleneck.h): the
// block's t2 and its input, subsampled by the shortcut's stride, side by side along channels,
// so that one GEMM over K = width + in computes conv3(t2) + downsample(x):
//   y[n, h, w, 0:Ca]       = a[n, h, w, :]                  a: [N, Ho, Wo, Ca]
//   y[n, h, w, Ca:Ca + Cb] = b[n, h·s, w·s, :]              b: [N, H, W, Cb]
// A streaming copy; it moves the two inputs once and writes y once, which is what the fold saves
// over writing the downsample's [N, Ho, Wo, 4·width] output and reading it back as the residual.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// y: [N, Ho, Wo, Ca + Cb]; a: [N, Ho, Wo, Ca]; b: [N, H, W, Cb] with Ho = ceil(H / s),
// Wo = ceil(W / s) (a 1×1 stride-s convolution's output). All of `dtype` (F32 or BF16); y must
// alias neither input. 16-byte vectors where every row and pointer allows them, else one element
// a thread.
void concat_shortcut_forward(DType dtype, void* y, const void* a, int Ca, const void* b, int Cb, int N, int H, int W,
                             int stride, cudaStream_t stream);

}  // namespace laptime
