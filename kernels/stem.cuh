// ResNet's whole stem in one bf16 kernel: the 4×4 stride-1 convolution on the image's
// space-to-depth transform (layers/resnet50/space_to_depth.h), + bias, ReLU, and the 3×3 stride-2
// max pool (padding 1, padding absent), writing only the pooled output. The conv output
// (B×112×112×64 at 224, 411 MB at B256) never reaches memory. Strategy: kernels/stem.cu.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/dtype.h"

namespace laptime {

// The stored channels of the s2d input the kernel takes (bf16: 4·3 colour channels padded to 16).
constexpr int kFusedStemInChannels = 16;
constexpr int kFusedStemKernel = 4;  // the s2d convolution's kernel side

// How one launch is cut: each image's pooled rows in `bands` bands of `band_rows` rows (the last
// may be shorter), one band per work unit, `grid` persistent blocks looping over the units.
// The tensor-core path of the stem's implicit GEMM (laptime lab's stem v2, v3 and v4; its v1 is
// a direct CUDA-core kernel of the lab's own):
//   MmaSync  v2, kernels/stem.cu: mma.sync from ldmatrix fragments, sm_80 and later;
//   Wgmma    v3, kernels/stem_sm90.cu: wgmma, the weights in registers and the pixels read
//            straight from the staged rows; sm_90 (compiled for sm_90a, in an sm_90 build), 64
//            output channels (ResNet-50's stem);
//   Overlap  v4, the same file's second kernel: wgmma with the pool on a warpgroup of its own,
//            overlapping the next step's MMA, and the two MMA warpgroups in ping-pong; Wgmma's
//            conditions and one conv row a chunk (a conv side up to 112: 224-pixel images);
//   Auto     Wgmma where it runs, else MmaSync (Overlap measured slower: kernels/stem_sm90.cu).
enum class FusedStemCore { Auto, MmaSync, Wgmma, Overlap };
const char* fused_stem_core_name(FusedStemCore core);  // "auto", "mma.sync", "wgmma", "wgmma, pool overlapped"

struct FusedStemPlan {
  int bands = 1, band_rows = 0, grid = 0;
  int smem_bytes = 0;                           // dynamic shared memory per block
  FusedStemCore core = FusedStemCore::MmaSync;  // never Auto
};

// "" when the fused kernel runs this stem, else why not (one sentence): bf16 storage, a 4×4
// kernel on 16 stored channels, out_channels a multiple of 8 in [8, 64], and the shared memory
// an s2d side of Hs needs within `smem_optin` bytes (the device's per-block opt-in limit).
std::string fused_stem_refusal(DType dtype, int in_channels, int kernel, int out_channels, int Hs, int smem_optin);

// "" when the wgmma core runs this stem on `device`, else why not (one sentence): this build
// compiled it (CMAKE_CUDA_ARCHITECTURES with 90), the device is sm_90, 64 output channels, and
// its shared memory at side Hs fits the device's opt-in limit.
std::string fused_stem_wgmma_refusal(int out_channels, int Hs, int device);
// "" when the Overlap core runs it: the wgmma core's conditions, a conv side So = Hs − 3 of at most
// 112 (one conv row a chunk), and its own shared memory within the opt-in limit.
std::string fused_stem_overlap_refusal(int out_channels, int Hs, int device);

// Build time, once per (out_channels, Hs, N): the shared-memory opt-in (cudaFuncSetAttribute),
// the blocks per SM that fit, and the cut of N images over the device's SMs. `device` is
// the current device. Throws a sentence when fused_stem_refusal would, or when `core` is
// Wgmma and fused_stem_wgmma_refusal says why not.
FusedStemPlan fused_stem_plan(int N, int Hs, int out_channels, int device, FusedStemCore core = FusedStemCore::Auto);

// out: [N, Po, Po, Cout] bf16, Po = pool_out_size(So, 3, 2, 1), So = Hs − 3 (the stem's output
// side); in: [N, Hs, Hs, 16] bf16 (the s2d input); weight: [Cout, 4, 4, 16] bf16 (KRSC, BatchNorm
// folded); bias: [Cout] bf16. All 16-byte aligned. `plan` from fused_stem_plan for this N, Hs, Cout.
// out_inv_scale non-null: out is e4m3 instead, each pooled bf16 value · *out_inv_scale rounded and
// saturated (what quantize_fp8 would write from the bf16 output: fp8 ResNet-50's e4m3 stream).
void fused_stem_forward(void* out, const void* in, const void* weight, const void* bias, int N, int Hs, int Cout,
                        const FusedStemPlan& plan, cudaStream_t stream, const float* out_inv_scale = nullptr);

}  // namespace laptime
