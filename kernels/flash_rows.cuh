// What the two bf16 flash kernels (kernels/flash_attention.cu on mma.sync, flash_attention_sm90.cu
// on wgmma) share: their accumulators have one layout, so they end their rows alike.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace laptime {

// The end of a thread's two rows, row_g and row_g + 8, in the m16n8 accumulator layout both MMA
// shapes give (lane = 4g + t: columns 8j + 2t and 8j + 2t + 1 of each 8-wide column tile j, o(j, e)
// with e = 2r and 2r + 1 for row r): each row's sum over the 4 lanes that hold it, then the row
// divided by it and stored as bf16 pairs. `dst0` is element 2t of row 0's head in the output
// ([B, T, C] at b, h), C its row stride; rows at or past T are not stored.
template <int kHeadDim, class O>
__device__ __forceinline__ void store_rows(__nv_bfloat16* dst0, int64_t C, float (&l)[2], int row_g, int T, O o) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_g + r * 8;
    if (row >= T) continue;
    const float inv = 1.f / l[r];
    __nv_bfloat16* dst = dst0 + row * C;
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j)
      *reinterpret_cast<__nv_bfloat162*>(dst + j * 8) = __floats2bfloat162_rn(o(j, 2 * r) * inv, o(j, 2 * r + 1) * inv);
  }
}

}  // namespace laptime
