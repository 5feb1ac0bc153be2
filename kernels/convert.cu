#include "kernels/convert.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

template <class Dst, class Src>
__global__ void convert_kernel(Dst* dst, const Src* src, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = from_f32<Dst>(to_f32(src[i]));
}

template <class T>
__global__ void fill_nan_kernel(T* dst, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = from_f32<T>(__int_as_float(0x7fc00000));
}

}  // namespace

void convert_from_f32(DType dst_dtype, void* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(dst_dtype, convert_kernel<scalar_t, float>
                         <<<grid_stride_blocks(n, 256), 256, 0, stream>>>(static_cast<scalar_t*>(dst), src, n));
  CUDA_CHECK_LAUNCH();
}

void convert_to_f32(float* dst, DType src_dtype, const void* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(src_dtype, convert_kernel<float, scalar_t>
                         <<<grid_stride_blocks(n, 256), 256, 0, stream>>>(dst, static_cast<const scalar_t*>(src), n));
  CUDA_CHECK_LAUNCH();
}

void fill_nan(DType dtype, void* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(
      dtype, fill_nan_kernel<scalar_t><<<grid_stride_blocks(n, 256), 256, 0, stream>>>(static_cast<scalar_t*>(dst), n));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
