// laptime lab's embedding ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  one thread per output element (here)
//   v2  one block per token, threads striding the row: kernels/embedding.cu's general kernel
//   v3  one block per token, 16-byte vectors: production, embedding_forward
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/embedding.cuh"
#include "kernels/lab/launch.cuh"

namespace laptime::lab {
namespace {

template <class T>
__global__ void embedding_flat_kernel(T* __restrict__ out, const int32_t* __restrict__ tokens,
                                      const T* __restrict__ wte, const T* __restrict__ wpe, int T_, int C, int64_t n) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= n) return;
  const int64_t bt = idx / C;
  const int c = static_cast<int>(idx % C), t = static_cast<int>(bt % T_);
  const T tok = wte[static_cast<int64_t>(tokens[bt]) * C + c], pos = wpe[static_cast<int64_t>(t) * C + c];
  out[idx] = from_f32<T>(to_f32(tok) + to_f32(pos));
}

void v1(const EmbeddingArgs& a, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(a.B) * a.T * a.C;
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(a.dtype, embedding_flat_kernel<scalar_t><<<ceil_div(n, 256), 256, 0, stream>>>(
                                      static_cast<scalar_t*>(a.out), a.tokens, static_cast<const scalar_t*>(a.wte),
                                      static_cast<const scalar_t*>(a.wpe), a.T, a.C, n));
  CUDA_CHECK_LAUNCH();
}

void v2(const EmbeddingArgs& a, cudaStream_t stream) {
  embedding_forward_general(a.dtype, a.out, a.tokens, a.wte, a.wpe, a.B, a.T, a.C, stream);
}

void v3(const EmbeddingArgs& a, cudaStream_t stream) {
  embedding_forward(a.dtype, a.out, a.tokens, a.wte, a.wpe, a.B, a.T, a.C, stream);
}

}  // namespace

EmbeddingLaunch embedding_version(int index) {
  static constexpr LaunchFn<EmbeddingArgs> kVersions[] = {v1, v2, v3};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
