// laptime lab's stem ladder (kernels/lab/registry.cpp says what each step teaches): ResNet's stem
// as one kernel, conv (4×4 stride 1 on the space-to-depth input) + bias + ReLU + 3×3/2 max pool.
//   v1  one thread a pooled output channel, the nine conv pixels of its window on CUDA cores (here)
//   v2  tensor cores through mma.sync, a ring of conv rows in shared memory (kernels/stem.cu)
//   v3  wgmma, the weights in registers, the pixels read straight from the staged rows
//       (kernels/stem_sm90.cu; production on sm_90, where v2 is production elsewhere)
//   v4  v3 with the pool on a warpgroup of its own and the MMA warpgroups in ping-pong
//       (kernels/stem_sm90.cu's second kernel; measured slower than v3, not production)
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/registry.h"
#include "kernels/pooling.cuh"

#include <cuda_bf16.h>

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

// Thread i: channel i % C of pooled pixel i / C. Each conv value of the window is rounded to
// bf16 after the ReLU, as the fused kernels round what they keep in shared memory; the window
// is clipped to the conv output (padding never wins a max over ReLU'd values).
__global__ void stem_direct_kernel(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ in,
                                   const __nv_bfloat16* __restrict__ weight, const __nv_bfloat16* __restrict__ bias,
                                   int N, int Hs, int C, int So, int Po) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(N) * Po * Po * C) return;
  const int o = static_cast<int>(i % C);
  int64_t r = i / C;
  const int px = static_cast<int>(r % Po);
  r /= Po;
  const int py = static_cast<int>(r % Po);
  const int64_t n = r / Po;
  const __nv_bfloat16* w = weight + static_cast<int64_t>(o) * 256;
  const float b = __bfloat162float(bias[o]);
  float best = 0.f;  // every window holds a real pixel and ReLU >= 0
  for (int y = max(2 * py - 1, 0); y < min(2 * py + 2, So); ++y)
    for (int x = max(2 * px - 1, 0); x < min(2 * px + 2, So); ++x) {
      float acc = 0.f;
      for (int a = 0; a < 4; ++a)
        for (int bb = 0; bb < 4; ++bb) {
          const __nv_bfloat16* p = in + ((n * Hs + y + a) * Hs + x + bb) * 16;
          const __nv_bfloat16* wk = w + (4 * a + bb) * 16;
          for (int c = 0; c < 16; ++c) acc += __bfloat162float(p[c]) * __bfloat162float(wk[c]);
        }
      best = fmaxf(best, __bfloat162float(__float2bfloat16_rn(fmaxf(acc + b, 0.f))));
    }
  out[i] = __float2bfloat16_rn(best);
}

void v1(const StemArgs& a, cudaStream_t stream) {
  const int So = a.Hs - 3, Po = pool_out_size(So, 3, 2, 1);
  const int64_t threads = static_cast<int64_t>(a.N) * Po * Po * a.C;
  if (threads == 0) return;
  stem_direct_kernel<<<ceil_div(threads, kThreads), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(a.out), static_cast<const __nv_bfloat16*>(a.in),
      static_cast<const __nv_bfloat16*>(a.weight), static_cast<const __nv_bfloat16*>(a.bias), a.N, a.Hs, a.C, So, Po);
  CUDA_CHECK_LAUNCH();
}

void fused(const StemArgs& a, cudaStream_t stream) {
  require(a.plan != nullptr, "internal: the fused stem launched without its plan.");
  fused_stem_forward(a.out, a.in, a.weight, a.bias, a.N, a.Hs, a.C, *a.plan, stream);
}

}  // namespace

StemLaunch stem_version(int index) {
  static constexpr LaunchFn<StemArgs> kVersions[] = {v1, fused, fused, fused};
  return version_at(kVersions, index);
}

std::string stem_refusal(int index, int Hs, int C, int device) {
  // A learner's file takes whatever the plain v1 takes: the fused stem's shapes, no shared memory.
  if (user_version_info("stem", index)) index = 0;
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // v1 has no shared memory to run out of; it takes the same shapes otherwise.
  const std::string why =
      fused_stem_refusal(DType::BF16, kFusedStemInChannels, kFusedStemKernel, C, Hs, index == 0 ? 1 << 30 : optin);
  if (!why.empty() || index < 2) return why;
  return index == 2 ? fused_stem_wgmma_refusal(C, Hs, device) : fused_stem_overlap_refusal(C, Hs, device);
}

FusedStemPlan stem_plan(int index, int N, int Hs, int C, int device) {
  if (index == 0 || user_version_info("stem", index)) return FusedStemPlan{};
  static constexpr FusedStemCore kCores[] = {FusedStemCore::MmaSync, FusedStemCore::Wgmma, FusedStemCore::Overlap};
  return fused_stem_plan(N, Hs, C, device, kCores[index - 1]);
}

}  // namespace laptime::lab
