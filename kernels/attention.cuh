// The non-GEMM parts of causal multi-head self-attention. The two GEMMs (Q·Kᵀ and P·V) run
// through cuBLASLt as strided-batched products over B·H heads (layers/gpt2/attention.cpp); these
// kernels move data between the [B, T, 3, H, hd] layout the QKV projection writes and the
// per-head [B, H, T, hd] layout the batched GEMMs read, and compute the causal softmax.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// q, k, v: [B, H, T, hd] each; qkv: [B, T, 3C] with C = H·hd, laid out as (q | k | v), each
// (head, dim). All of `dtype`.
void split_qkv_heads(DType dtype, void* q, void* k, void* v, const void* qkv, int B, int T, int H, int hd,
                     cudaStream_t stream);

// probs: [B·H, T, T] of `dtype`; scores: [B·H, T, T] fp32, already scaled by 1/sqrt(hd).
// Row i gets softmax over keys j <= i and exact zeros for j > i, so the following P·V
// product over full rows is correct.
void causal_softmax(DType dtype, void* probs, const float* scores, int BH, int T, cudaStream_t stream);

// n elements fp32 -> fp16 and fp16 -> fp32 (round to nearest; values past fp16's ±65504
// become ±inf). For the tf32 path's fp16 attention core (layers/gpt2/attention.cpp).
void convert_f32_to_f16(void* dst, const float* src, int64_t n, cudaStream_t stream);
void convert_f16_to_f32(float* dst, const void* src, int64_t n, cudaStream_t stream);

// out: [B, T, C]; heads: [B, H, T, hd]. All of `dtype`.
void merge_heads(DType dtype, void* out, const void* heads, int B, int T, int H, int hd, cudaStream_t stream);

}  // namespace laptime
