// The wgmma attention core (kernels/flash_attention_sm90.cu, compiled for sm_90a alone): causal
// softmax(q kᵀ / 8) v for bf16 with head size 64, read from the QKV projection's [B, T, 3C] and
// written as the merged heads [B, T, C], as kernels/flash_attention.cuh's mma.sync kernel does.
// Internal to kernels/: kernels/flash_attention.cu's flash_attention_wgmma_* wrap it, and the build
// defines LAPTIME_HAVE_SM90A where it is compiled (an sm_90 build).
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace laptime::flash_sm90 {

// "" where it runs on `device` (an sm_90 device: kernels/sm90a.h) with this head size, else why not.
std::string refusal(int head_dim, int device);
// The shared-memory opt-in (once, before the first launch; not a stream operation).
void prepare();
// out: [B, T, C] bf16; qkv: [B, T, 3C] bf16; C = H * 64; both 16-byte aligned.
void forward(void* out, const void* qkv, int B, int T, int H, cudaStream_t stream);

}  // namespace laptime::flash_sm90
