// Embedding forward: a gather plus an add. One block per token; its threads stride C, 16 bytes
// (8 bf16 or 4 fp32) a load and a store where the rows allow it (C a whole number of vectors,
// 16-byte aligned tables and output), else one element at a time (the general kernel).
#include "kernels/embedding.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

template <class T>
__global__ void embedding_kernel(T* __restrict__ out, const int32_t* __restrict__ tokens, const T* __restrict__ wte,
                                 const T* __restrict__ wpe, int T_, int C) {
  const int bt = blockIdx.x;  // b * T + t
  const int t = bt % T_;
  const T* tok_row = wte + static_cast<size_t>(tokens[bt]) * C;
  const T* pos_row = wpe + static_cast<size_t>(t) * C;
  T* y = out + static_cast<size_t>(bt) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) y[c] = from_f32<T>(to_f32(tok_row[c]) + to_f32(pos_row[c]));
}

template <class T>
__global__ void embedding_vec_kernel(T* __restrict__ out, const int32_t* __restrict__ tokens, const T* __restrict__ wte,
                                     const T* __restrict__ wpe, int T_, int C) {
  constexpr int kVec = 16 / sizeof(T);
  const int bt = blockIdx.x;
  const int t = bt % T_, n_vec = C / kVec;  // whole vectors: the launcher checked
  const uint4* tok_row = reinterpret_cast<const uint4*>(wte + static_cast<size_t>(tokens[bt]) * C);
  const uint4* pos_row = reinterpret_cast<const uint4*>(wpe + static_cast<size_t>(t) * C);
  uint4* y = reinterpret_cast<uint4*>(out + static_cast<size_t>(bt) * C);
  for (int i = threadIdx.x; i < n_vec; i += blockDim.x) {
    uint4 a = tok_row[i];
    const uint4 b = pos_row[i];
    T* ea = reinterpret_cast<T*>(&a);
    const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int k = 0; k < kVec; ++k) ea[k] = from_f32<T>(to_f32(ea[k]) + to_f32(eb[k]));
    y[i] = a;
  }
}

enum class Path { Auto, General };

void launch(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
            Path path, cudaStream_t stream) {
  if (B * T == 0) return;
  const bool aligned =
      (reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(wte) | reinterpret_cast<uintptr_t>(wpe)) % 16 ==
      0;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    constexpr int kVec = 16 / sizeof(scalar_t);
    auto* y = static_cast<scalar_t*>(out);
    const auto* te = static_cast<const scalar_t*>(wte);
    const auto* pe = static_cast<const scalar_t*>(wpe);
    if (path == Path::Auto && aligned && C % kVec == 0) {
      // A block of at least one warp, at most one thread per vector of the row (768 bf16: 96).
      const int threads = std::min(256, std::max(32, (C / kVec + 31) / 32 * 32));
      embedding_vec_kernel<scalar_t><<<B * T, threads, 0, stream>>>(y, tokens, te, pe, T, C);
    } else {
      embedding_kernel<scalar_t><<<B * T, 256, 0, stream>>>(y, tokens, te, pe, T, C);
    }
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void embedding_forward(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T,
                       int C, cudaStream_t stream) {
  launch(dtype, out, tokens, wte, wpe, B, T, C, Path::Auto, stream);
}

void embedding_forward_general(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B,
                               int T, int C, cudaStream_t stream) {
  launch(dtype, out, tokens, wte, wpe, B, T, C, Path::General, stream);
}

}  // namespace laptime
