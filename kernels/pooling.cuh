// ResNet pooling on NHWC activations: the stem's 3×3 stride-2 max pool and the global
// average pool before the classifier. F32 or BF16 storage, fp32 arithmetic.
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// Output height (or width) of a k×k window with this stride and padding: floor((in + 2p − k) / s) + 1.
inline int pool_out_size(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }

// out: [N, Ho, Wo, C]; in: [N, H, W, C]. 3×3 window, stride 2, padding 1 (PyTorch's
// MaxPool2d(3, 2, 1): padded positions never win), Ho = pool_out_size(H, 3, 2, 1).
void maxpool3x3s2_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream);
// The same with the general kernel alone (one output element a thread): maxpool3x3s2_forward's
// fallback, laptime lab's maxpool v1.
void maxpool3x3s2_forward_general(DType dtype, void* out, const void* in, int N, int H, int W, int C,
                                  cudaStream_t stream);

// out: [N, C] = mean over H·W of in: [N, H, W, C], summed in fp32.
void global_avgpool_forward(DType dtype, void* out, const void* in, int N, int H, int W, int C, cudaStream_t stream);
// The same with the general kernel alone (one output element a thread, its H·W loads in a
// row): global_avgpool_forward's fallback, laptime lab's avgpool v1.
void global_avgpool_forward_general(DType dtype, void* out, const void* in, int N, int H, int W, int C,
                                    cudaStream_t stream);
// The same on an e4m3 input whose real value is *scale · in (fp8 ResNet-50's e4m3 stream): out
// [N, C] bf16 = *scale · mean over H·W, summed in fp32.
void global_avgpool_e4m3_forward(void* out, const void* in, const float* scale, int N, int H, int W, int C,
                                 cudaStream_t stream);

}  // namespace laptime
