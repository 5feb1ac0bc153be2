// The residual add, alone and fused with the LayerNorm after it (GPT-2's x = x + attn(...);
// ln_2(x)). GPT-2 as built fuses the add into the projection GEMMs instead (cuBLASLt, beta = 1:
// layers/gpt2/transformer_block.h), so no model runs these today: they are the production rungs of
// laptime lab's residual and residual_layernorm ladders (docs/KERNELS.md), kept ready for a
// model whose producer cannot accumulate.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// out = x + r over n elements of `dtype` (F32 or BF16); out may equal x. Summed in fp32.
void residual_forward(DType dtype, void* out, const void* x, const void* r, int64_t n, cudaStream_t stream);

// x_out = x + r (rounded to `dtype`, as the residual stream stores it), y = layernorm(x_out) with
// weight, bias [C]; all [rows, C] of `dtype`; x_out may equal x. One warp per row holds x + r in
// registers where the row fits (16-byte aligned rows of whole vectors, C <= 2048 in bf16, 1024 in
// fp32), so the sum is never read back; other shapes run residual_forward, then layernorm_forward.
void residual_layernorm_forward(DType dtype, void* x_out, void* y, const void* x, const void* r, const void* weight,
                                const void* bias, int rows, int C, float eps, cudaStream_t stream);

}  // namespace laptime
