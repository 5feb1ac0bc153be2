// The fused stem's Hopper core (kernels/stem_sm90.cu, compiled for sm_90a alone): the same
// conv + bias + ReLU + 3×3/2 max pool as kernels/stem.cu, its implicit GEMM on wgmma. Internal to
// kernels/: fused_stem_plan() (kernels/stem.cu) chooses it, and the build defines
// LAPTIME_HAVE_SM90A where it is compiled (an sm_90 build).
#pragma once

#include <cuda_runtime.h>

#include "kernels/stem_common.cuh"

namespace laptime::stem {

constexpr int kWgmmaChannels = 64;  // the one width it runs: ResNet-50's stem
constexpr int kWgmmaChunk = 112;    // pixels a wgmma (m64n112k16: 64 channels × 112 pixels of one conv row)

// Dynamic shared memory one block needs at s2d side Hs.
int wgmma_smem_bytes(int Hs);
// Build time: the shared-memory opt-in (to `optin` bytes); returns the blocks an SM holds at `bytes`.
int wgmma_prepare(int optin, int bytes);
void wgmma_launch(const StemParams& q, int grid, int smem_bytes, cudaStream_t stream);

// The same with the pool overlapped (kernels/stem_sm90.cu's second kernel): a third warpgroup
// pools while the MMA warpgroups compute the next step. One conv row a chunk: So ≤ kWgmmaChunk.
int overlap_smem_bytes(int Hs);
int overlap_prepare(int optin, int bytes);
void overlap_launch(const StemParams& q, int grid, int smem_bytes, cudaStream_t stream);

}  // namespace laptime::stem
