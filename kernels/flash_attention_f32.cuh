// Fused causal attention for fp32 storage (fp32 and tf32 precision): the flash-style
// counterpart of kernels/flash_attention.cuh. Reads q, k, v straight from the QKV projection's
// [B, T, 3C] output, never materialises the T x T scores, and writes the merged heads
// [B, T, C] that the output projection reads. Plain fp32 FFMA (no TF32 tensor cores) and an
// fp32 online softmax with expf, so it stays within strict fp32's 1e-5 of the naive core.
#pragma once

#include <cuda_runtime.h>

namespace laptime {

// True for the head sizes the kernel is instantiated for: 16, 32 and 64.
bool flash_attention_f32_supported(int head_dim);

// out: [B, T, C] fp32; qkv: [B, T, 3C] fp32 (q | k | v, each (head, dim)); C = H * head_dim.
// Causal, scale 1/sqrt(head_dim). Both pointers 16-byte aligned.
void flash_attention_f32_forward(float* out, const float* qkv, int B, int T, int H, int head_dim, cudaStream_t stream);

}  // namespace laptime
