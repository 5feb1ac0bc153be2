// laptime lab's attention-core ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  the scores materialised: S = q kᵀ, the causal softmax, P v; one thread per output (here,
//       with kernels/attention.cu's causal_softmax)
//   v2  online softmax, one warp per query, no T x T matrix (here)
//   v3  flash: kernels/flash_attention.cu (bf16, head size 64) and flash_attention_f32.cu (fp32)
//   v4  cuDNN's fused attention (layers/gpt2/sdpa_cudnn.h): the lab runner calls it, not this table
//   v5  flash on wgmma: kernels/flash_attention_sm90.cu (bf16, head size 64, sm_90)
// All read q, k, v straight from the QKV projection's [B, T, 3C] and write [B, T, C].
#include <cmath>
#include <iterator>

#include "core/check.h"
#include "kernels/attention.cuh"
#include "kernels/common.cuh"
#include "kernels/flash_attention.cuh"
#include "kernels/flash_attention_f32.cuh"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/registry.h"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

// scores[bh, i, j] = scale · q[b, i, h, :] · k[b, j, h, :] for every (i, j), the masked half too.
template <class T>
__global__ void scores_kernel(float* __restrict__ scores, const T* __restrict__ qkv, int T_, int H, int hd, float scale,
                              int64_t n) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const int j = static_cast<int>(idx % T_), i = static_cast<int>(idx / T_ % T_);
  const int64_t bh = idx / (static_cast<int64_t>(T_) * T_), b = bh / H, h = bh % H;
  const int64_t C = static_cast<int64_t>(H) * hd;
  const T* q = qkv + (b * T_ + i) * 3 * C + h * hd;
  const T* k = qkv + (b * T_ + j) * 3 * C + C + h * hd;
  float dot = 0.f;
  for (int d = 0; d < hd; ++d) dot += to_f32(q[d]) * to_f32(k[d]);
  scores[idx] = dot * scale;
}

// out[b, i, h·hd + d] = Σ_j probs[bh, i, j] · v[b, j, h, d] over every j (the masked ones are 0).
template <class T>
__global__ void pv_kernel(T* __restrict__ out, const T* __restrict__ probs, const T* __restrict__ qkv, int T_, int H,
                          int hd, int64_t n) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // [B, T, H, hd]
  if (idx >= n) return;
  const int64_t C = static_cast<int64_t>(H) * hd;
  const int d = static_cast<int>(idx % hd), h = static_cast<int>(idx / hd % H);
  const int64_t i = idx / C % T_, b = idx / (C * T_);
  const T* p = probs + ((b * H + h) * T_ + i) * T_;
  const T* v = qkv + b * T_ * 3 * C + 2 * C + static_cast<int64_t>(h) * hd + d;
  float acc = 0.f;
  for (int j = 0; j < T_; ++j) acc += to_f32(p[j]) * to_f32(v[static_cast<int64_t>(j) * 3 * C]);
  out[idx] = from_f32<T>(acc);
}

void v1(const AttentionArgs& a, cudaStream_t stream) {
  const int64_t bh = static_cast<int64_t>(a.B) * a.H, tt = bh * a.T * a.T, n = bh * a.T * a.hd;
  if (n == 0) return;
  const float scale = 1.f / std::sqrt(static_cast<float>(a.hd));
  LAPTIME_DISPATCH_FLOAT(a.dtype, {
    const auto* qkv = static_cast<const scalar_t*>(a.qkv);
    scores_kernel<scalar_t><<<ceil_div(tt, kThreads), kThreads, 0, stream>>>(a.scores, qkv, a.T, a.H, a.hd, scale, tt);
    CUDA_CHECK_LAUNCH();
    causal_softmax(a.dtype, a.probs, a.scores, static_cast<int>(bh), a.T, stream);
    pv_kernel<scalar_t><<<ceil_div(n, kThreads), kThreads, 0, stream>>>(
        static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.probs), qkv, a.T, a.H, a.hd, n);
  });
  CUDA_CHECK_LAUNCH();
}

// One warp per (b, h, i); lane l holds dimensions l, l + 32, ... of q (pre-scaled) and of the
// output accumulator. For each key j <= i: the score by a warp sum, then the online update:
// m' = max(m, s), l = l·e^(m − m') + e^(s − m'), o = o·e^(m − m') + e^(s − m')·v_j.
template <class T, int kPerLane>
__global__ void online_kernel(T* __restrict__ out, const T* __restrict__ qkv, int B, int T_, int H, int hd,
                              float scale) {
  const int64_t warp = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= static_cast<int64_t>(B) * H * T_) return;  // whole warps leave together
  const int i = static_cast<int>(warp % T_);
  const int64_t bh = warp / T_, b = bh / H, h = bh % H, C = static_cast<int64_t>(H) * hd;
  const T* q = qkv + (b * T_ + i) * 3 * C + h * hd;
  float qr[kPerLane], acc[kPerLane];
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int d = lane + 32 * k;
    qr[k] = d < hd ? to_f32(q[d]) * scale : 0.f;
    acc[k] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (int j = 0; j <= i; ++j) {
    const T* kr = qkv + (b * T_ + j) * 3 * C + C + h * hd;
    const T* vr = kr + C;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (lane + 32 * k < hd) s += qr[k] * to_f32(kr[lane + 32 * k]);
    s = warp_sum(s);
    const float m_new = fmaxf(m, s);
    const float correction = expf(m - m_new);  // 0 on the first key (m = -inf)
    const float p = expf(s - m_new);
    l = l * correction + p;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k)
      if (lane + 32 * k < hd) acc[k] = acc[k] * correction + p * to_f32(vr[lane + 32 * k]);
    m = m_new;
  }
  T* o = out + (b * T_ + i) * C + h * hd;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k)
    if (lane + 32 * k < hd) o[lane + 32 * k] = from_f32<T>(acc[k] / l);
}

template <class T>
void online(const AttentionArgs& a, cudaStream_t stream) {
  const int64_t warps = static_cast<int64_t>(a.B) * a.H * a.T;
  const unsigned blocks = ceil_div(warps, kThreads / 32);
  const float scale = 1.f / std::sqrt(static_cast<float>(a.hd));
  auto* o = static_cast<T*>(a.out);
  const auto* qkv = static_cast<const T*>(a.qkv);
  if (a.hd <= 32)
    online_kernel<T, 1><<<blocks, kThreads, 0, stream>>>(o, qkv, a.B, a.T, a.H, a.hd, scale);
  else if (a.hd <= 64)
    online_kernel<T, 2><<<blocks, kThreads, 0, stream>>>(o, qkv, a.B, a.T, a.H, a.hd, scale);
  else if (a.hd <= 128)
    online_kernel<T, 4><<<blocks, kThreads, 0, stream>>>(o, qkv, a.B, a.T, a.H, a.hd, scale);
  else
    online_kernel<T, 8><<<blocks, kThreads, 0, stream>>>(o, qkv, a.B, a.T, a.H, a.hd, scale);
}

void v2(const AttentionArgs& a, cudaStream_t stream) {
  if (static_cast<int64_t>(a.B) * a.H * a.T == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, online<scalar_t>(a, stream));
  CUDA_CHECK_LAUNCH();
}

void v3(const AttentionArgs& a, cudaStream_t stream) {
  if (a.dtype == DType::F32)
    flash_attention_f32_forward(static_cast<float*>(a.out), static_cast<const float*>(a.qkv), a.B, a.T, a.H, a.hd,
                                stream);
  else
    flash_attention_forward(a.out, a.qkv, a.B, a.T, a.H, stream);
}

void v5(const AttentionArgs& a, cudaStream_t stream) {
  flash_attention_wgmma_forward(a.out, a.qkv, a.B, a.T, a.H, stream);
}

constexpr int kVersions = 5;

}  // namespace

AttentionLaunch attention_version(int index) {
  // v4 is cuDNN's (layers/gpt2/sdpa_cudnn.h): the lab runner calls it.
  static constexpr LaunchFn<AttentionArgs> kLaunch[] = {v1, v2, v3, nullptr, v5};
  static_assert(std::size(kLaunch) == kVersions);
  return version_at(kLaunch, index);
}

std::string attention_refusal(int index, DType dtype, int hd) {
  if (dtype != DType::F32 && dtype != DType::BF16) return "it takes F32 or BF16 data.";
  if (hd > 256) return "its head size is at most 256.";
  if (index == 2 && dtype == DType::F32 && !flash_attention_f32_supported(hd))
    return "the fp32 flash kernel is built for head sizes 16, 32 and 64, not " + std::to_string(hd) + ".";
  if (index == 2 && dtype == DType::BF16 && !flash_attention_supported(dtype, hd))
    return "the bf16 flash kernel is built for head size 64, not " + std::to_string(hd) + ".";
  if (index == 3 && dtype != DType::BF16) return "cuDNN's fused attention takes 16-bit data, not fp32.";
  if (index == 4)
    if (std::string why = flash_attention_wgmma_prepare(dtype, hd); !why.empty()) return why;
  if (index >= kVersions && !user_version_info("attention", index)) return "no such version.";
  return "";
}

std::size_t attention_probs_offset(int B, int T, int H) {
  const std::size_t tt = static_cast<std::size_t>(B) * H * T * T;
  return (tt * sizeof(float) + 255) / 256 * 256;
}

std::size_t attention_scratch_bytes(int index, int B, int T, int H, DType dtype) {
  if (index != 0) return 0;
  return attention_probs_offset(B, T, H) + static_cast<std::size_t>(B) * H * T * T * dtype_size(dtype);
}

}  // namespace laptime::lab
