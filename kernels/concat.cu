// The shortcut's concatenation (kernels/concat.cuh).
//
// One 16-byte vector of y a thread-step, grid-stride: the vector's pixel and place in the row
// come from one division by the row's vectors; a vector of b's part also needs the pixel's
// (n, h, w) for its strided source, two divisions more. The copy is bound by DRAM: at ResNet-50's
// B256 shapes a thread moves 16 bytes for three integer divisions, which the memory latency hides.
#include "kernels/concat.cuh"

#include <type_traits>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

// Vec: elements a step (16 bytes' worth, or 1). Ca and Cb are multiples of Vec.
template <class T, int Vec>
__global__ void concat_shortcut_kernel(T* __restrict__ y, const T* __restrict__ a, int Ca, const T* __restrict__ b,
                                       int Cb, int Ho, int Wo, int H, int W, int stride, int64_t pixels) {
  using V = std::conditional_t<Vec == 1, T, uint4>;
  const int va = Ca / Vec, vb = Cb / Vec, row = va + vb;
  const int64_t n_vec = pixels * row;
  const V* av = reinterpret_cast<const V*>(a);
  const V* bv = reinterpret_cast<const V*>(b);
  V* yv = reinterpret_cast<V*>(y);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_vec;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = i / row;
    const int c = static_cast<int>(i - p * row);  // the vector's place in y's row
    if (c < va) {
      yv[p * row + c] = av[p * va + c];
    } else {
      const int64_t n = p / (int64_t{Ho} * Wo);
      const int hw = static_cast<int>(p - n * Ho * Wo);
      const int h = hw / Wo, w = hw - h * Wo;
      const int64_t src = (n * H + int64_t{h} * stride) * W + int64_t{w} * stride;
      yv[p * row + c] = bv[src * vb + (c - va)];
    }
  }
}

}  // namespace

void concat_shortcut_forward(DType dtype, void* y, const void* a, int Ca, const void* b, int Cb, int N, int H, int W,
                             int stride, cudaStream_t stream) {
  require(stride >= 1 && Ca >= 0 && Cb >= 0 && N >= 0 && H >= 0 && W >= 0,
          "internal: concat_shortcut_forward got a negative shape or a stride below 1.");
  const int Ho = (H + stride - 1) / stride, Wo = (W + stride - 1) / stride;
  const int64_t pixels = int64_t{N} * Ho * Wo;
  if (pixels == 0 || Ca + Cb == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    constexpr int kVec = 16 / sizeof(scalar_t);
    auto* yo = static_cast<scalar_t*>(y);
    const auto* ai = static_cast<const scalar_t*>(a);
    const auto* bi = static_cast<const scalar_t*>(b);
    const uintptr_t bits =
        reinterpret_cast<uintptr_t>(y) | reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b);
    const bool vec = bits % 16 == 0 && Ca % kVec == 0 && Cb % kVec == 0;
    const int64_t n = pixels * ((Ca + Cb) / (vec ? kVec : 1));
    const dim3 grid = grid_stride_blocks(n, kThreads);
    if (vec)
      concat_shortcut_kernel<scalar_t, kVec>
          <<<grid, kThreads, 0, stream>>>(yo, ai, Ca, bi, Cb, Ho, Wo, H, W, stride, pixels);
    else
      concat_shortcut_kernel<scalar_t, 1>
          <<<grid, kThreads, 0, stream>>>(yo, ai, Ca, bi, Cb, Ho, Wo, H, W, stride, pixels);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
