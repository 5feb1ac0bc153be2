// GPT-2 input embedding: out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :].
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out: [B, T, C]; tokens: [B, T] int32 on the device, each in [0, vocab); wte: [vocab, C];
// wpe: [n_ctx, C] with T <= n_ctx. Token ids are validated on the host before upload
// (GPT2::upload_tokens); the kernel trusts them.
void embedding_forward(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T,
                       int C, cudaStream_t stream);
// The general kernel alone (one element a thread-step): embedding_forward's fallback, laptime
// lab's embedding v2.
void embedding_forward_general(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B,
                               int T, int C, cudaStream_t stream);

}  // namespace laptime
