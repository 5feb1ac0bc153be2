// laptime lab's fp8 ladders (kernels/lab/registry.cpp says what each step teaches):
//   quantize  v1 one thread per element (here); v2 grid-stride: kernels/fp8.cu's general kernel;
//             v3 8 elements a thread: production, quantize_fp8
//   amax      v1 one atomicMax per element (here); v2 a warp's max, one atomic a warp (here);
//             v3 grid-stride with a block reduction: production, amax_forward
// amax compares float bits as unsigned integers: for non-negative floats their order is the
// values' order, and a NaN's bits (sign cleared by fabsf) are above every finite value's, so a
// NaN wins as production's does.
#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/fp8.cuh"
#include "kernels/lab/launch.cuh"

namespace laptime::lab {
namespace {

constexpr int kThreads = 256;

__global__ void quantize_one_kernel(__nv_fp8_e4m3* __restrict__ dst, const float* __restrict__ inv_scale,
                                    const __nv_bfloat16* __restrict__ src, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = from_f32<__nv_fp8_e4m3>(__bfloat162float(src[i]) * *inv_scale);
}

void quantize_v1(const QuantizeArgs& a, cudaStream_t stream) {
  if (a.n == 0) return;
  quantize_one_kernel<<<ceil_div(a.n, kThreads), kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(a.out), a.inv_scale,
                                                                        static_cast<const __nv_bfloat16*>(a.in), a.n);
  CUDA_CHECK_LAUNCH();
}

void quantize_v2(const QuantizeArgs& a, cudaStream_t stream) {
  quantize_fp8_general(a.out, a.inv_scale, DType::BF16, a.in, a.n, stream);
}

void quantize_v3(const QuantizeArgs& a, cudaStream_t stream) {
  quantize_fp8(a.out, a.inv_scale, DType::BF16, a.in, a.n, stream);
}

__global__ void amax_atomic_kernel(float* amax, const __nv_bfloat16* __restrict__ x, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) atomicMax(reinterpret_cast<unsigned*>(amax), __float_as_uint(fabsf(__bfloat162float(x[i]))));
}

__global__ void amax_warp_kernel(float* amax, const __nv_bfloat16* __restrict__ x, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  unsigned m = i < n ? __float_as_uint(fabsf(__bfloat162float(x[i]))) : 0u;  // every lane takes part
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0 && m > 0) atomicMax(reinterpret_cast<unsigned*>(amax), m);
}

template <void (*kKernel)(float*, const __nv_bfloat16*, int64_t)>
void amax_one_per_thread(const AmaxArgs& a, cudaStream_t stream) {
  if (a.n == 0) return;
  kKernel<<<ceil_div(a.n, kThreads), kThreads, 0, stream>>>(a.amax, static_cast<const __nv_bfloat16*>(a.in), a.n);
  CUDA_CHECK_LAUNCH();
}

void amax_v3(const AmaxArgs& a, cudaStream_t stream) { amax_forward(a.amax, DType::BF16, a.in, a.n, stream); }

}  // namespace

QuantizeLaunch quantize_version(int index) {
  static constexpr LaunchFn<QuantizeArgs> kVersions[] = {quantize_v1, quantize_v2, quantize_v3};
  return version_at(kVersions, index);
}

AmaxLaunch amax_version(int index) {
  static constexpr LaunchFn<AmaxArgs> kVersions[] = {amax_one_per_thread<amax_atomic_kernel>,
                                                     amax_one_per_thread<amax_warp_kernel>, amax_v3};
  return version_at(kVersions, index);
}

}  // namespace laptime::lab
