// Fused causal attention for bf16 (FlashAttention-2 style): reads q, k, v straight from the
// QKV projection's [B, T, 3C] output, never materialises the T x T scores, and writes the
// merged heads [B, T, C] that the output projection reads. Replaces split_qkv_heads, both
// batched GEMMs, the softmax and merge_heads on the bf16 path.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/dtype.h"

namespace laptime {

// True when the fused kernel handles this case: bf16 storage and head size 64.
bool flash_attention_supported(DType dtype, int head_dim);

// out: [B, T, C] bf16; qkv: [B, T, 3C] bf16 (q | k | v, each (head, dim)); C = H * 64.
void flash_attention_forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream);

// The same core on Hopper's wgmma (kernels/flash_attention_sm90.cu: warpgroup products from
// shared memory, two blocks an SM). "" where it runs on the current device (a build for sm_90, an
// sm_90 GPU, bf16, head size 64), and then it is ready to launch (its shared-memory opt-in set:
// build time, not a stream operation); else why not.
std::string flash_attention_wgmma_prepare(DType dtype, int head_dim);
// As flash_attention_forward; only after flash_attention_wgmma_prepare said "" for this device.
void flash_attention_wgmma_forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream);

}  // namespace laptime
