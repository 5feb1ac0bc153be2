// Embedding forward: a gather plus an add. One block row per token; threads stride C.
#include "kernels/embedding.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

template <class T>
__global__ void embedding_kernel(T* __restrict__ out, const int32_t* __restrict__ tokens,
                                 const T* __restrict__ wte, const T* __restrict__ wpe, int T_, int C) {
  const int bt = blockIdx.x;  // b * T + t
  const int t = bt % T_;
  const T* tok_row = wte + static_cast<size_t>(tokens[bt]) * C;
  const T* pos_row = wpe + static_cast<size_t>(t) * C;
  T* y = out + static_cast<size_t>(bt) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) y[c] = from_f32<T>(to_f32(tok_row[c]) + to_f32(pos_row[c]));
}

}  // namespace

void embedding_forward(DType dtype, void* out, const int32_t* tokens, const void* wte, const void* wpe,
                       int B, int T, int C, cudaStream_t stream) {
  if (B * T == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, embedding_kernel<scalar_t><<<B * T, 256, 0, stream>>>(
                                    static_cast<scalar_t*>(out), tokens, static_cast<const scalar_t*>(wte),
                                    static_cast<const scalar_t*>(wpe), T, C));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
