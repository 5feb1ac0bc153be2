// laptime lab's LayerNorm ladder (kernels/lab/registry.cpp says what each step teaches):
//   v1  one thread per row: the plain loop (here)
//   v2  one warp per row, three passes: kernels/layernorm.cu's general kernel
//   v3  one warp per row, the row in registers (sized for the widest row), 16-byte loads
//   v4  v3 with its registers sized to the row
//   v5  v4 with a launch bound of 8 blocks an SM: one wave of rows
//   v6  v5 launched as a programmatic dependent of the kernel before it (production, layernorm_forward)
// v2-v5 are layernorm_forward_path's other paths.
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/lab/launch.cuh"
#include "kernels/layernorm.cuh"

namespace laptime::lab {
namespace {

// Each thread owns a row and walks it three times. Neighbouring threads read addresses C
// elements apart, so every load of a warp touches 32 different cache lines.
template <class T>
__global__ void layernorm_thread_per_row(T* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight,
                                         const T* __restrict__ bias, int rows, int C, float eps) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* x = in + static_cast<size_t>(row) * C;
  T* y = out + static_cast<size_t>(row) * C;
  float sum = 0.f;
  for (int c = 0; c < C; ++c) sum += to_f32(x[c]);
  const float mean = sum / C;
  float sq = 0.f;
  for (int c = 0; c < C; ++c) {
    const float d = to_f32(x[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(sq / C + eps);
  for (int c = 0; c < C; ++c) y[c] = from_f32<T>((to_f32(x[c]) - mean) * rstd * to_f32(weight[c]) + to_f32(bias[c]));
}

void v1(const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return;
  LAPTIME_DISPATCH_FLOAT(
      a.dtype, layernorm_thread_per_row<scalar_t><<<ceil_div(a.rows, 256), 256, 0, stream>>>(
                   static_cast<scalar_t*>(a.out), static_cast<const scalar_t*>(a.in),
                   static_cast<const scalar_t*>(a.weight), static_cast<const scalar_t*>(a.bias), a.rows, a.C, a.eps));
  CUDA_CHECK_LAUNCH();
}

void run_path(LayerNormPath path, const LayerNormArgs& a, cudaStream_t stream) {
  layernorm_forward_path(path, a.dtype, a.out, a.in, a.weight, a.bias, a.rows, a.C, a.eps, stream);
}
void v2(const LayerNormArgs& a, cudaStream_t stream) { run_path(LayerNormPath::General, a, stream); }
void v3(const LayerNormArgs& a, cudaStream_t stream) { run_path(LayerNormPath::WidestRegisters, a, stream); }
void v4(const LayerNormArgs& a, cudaStream_t stream) { run_path(LayerNormPath::SizedRegisters, a, stream); }
void v5(const LayerNormArgs& a, cudaStream_t stream) { run_path(LayerNormPath::OneWave, a, stream); }
void v6(const LayerNormArgs& a, cudaStream_t stream) {
  layernorm_forward(a.dtype, a.out, a.in, a.weight, a.bias, a.rows, a.C, a.eps, stream);
}

}  // namespace

LayerNormLaunch layernorm_version(int index) {
  static constexpr LaunchFn<LayerNormArgs> kVersions[] = {v1, v2, v3, v4, v5, v6};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
