// Fused causal attention for bf16 (FlashAttention-2 style): reads q, k, v straight from the
// QKV projection's [B, T, 3C] output, never materialises the T x T scores, and writes the
// merged heads [B, T, C] that the output projection reads. Replaces split_qkv_heads, both
// batched GEMMs, the softmax and merge_heads on the bf16 path.
#pragma once

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// True when the fused kernel handles this case: bf16 storage and head size 64.
bool flash_attention_supported(DType dtype, int head_dim);

// out: [B, T, C] bf16; qkv: [B, T, 3C] bf16 (q | k | v, each (head, dim)); C = H * 64.
void flash_attention_forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream);

}  // namespace laptime
