// fp8 helpers (kernels/fp8.cuh).
//
// amax: a grid-stride loop keeps each thread's running max, a warp and then a block reduce
// it, and one atomicMax per block lands it: non-negative floats order like their bit patterns
// as unsigned integers, so atomicMax on the bits is a float max. Calibration-time only.
//
// quantize: one thread per 8 elements where the pointers allow (16 bytes of bf16 in, 8 of
// e4m3 out), else one per element. Memory-bound, like a copy at 3/4 of the bytes.
#include "kernels/fp8.cuh"

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

template <class T>
__global__ void amax_kernel(float* amax, const T* __restrict__ x, int64_t n) {
  float m = 0.f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = fabsf(to_f32(x[i]));
    m = v > m || v != v ? v : m;  // a NaN wins, so that it is seen
  }
  // fmaxf would drop a NaN: compare the bits instead (a NaN's are above every finite value's).
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, m, o);
    m = __float_as_uint(other) > __float_as_uint(m) ? other : m;
  }
  __shared__ unsigned warp_max[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_max[warp] = __float_as_uint(m);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned b = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) b = max(b, warp_max[w]);
    atomicMax(reinterpret_cast<unsigned*>(amax), b);
  }
}

template <class T>
__global__ void quantize_kernel(__nv_fp8_e4m3* __restrict__ dst, const float* __restrict__ inv_scale,
                                const T* __restrict__ src, int64_t n) {
  const float s = *inv_scale;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = from_f32<__nv_fp8_e4m3>(to_f32(src[i]) * s);
}

// 8 bf16 (16 bytes) in, 8 e4m3 (8 bytes) out per thread.
__global__ void quantize_bf16_vec8_kernel(uint2* __restrict__ dst, const float* __restrict__ inv_scale,
                                          const uint4* __restrict__ src, int64_t n8) {
  const float s = *inv_scale;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n8;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 raw = src[i];
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
    uint2 out;
    __nv_fp8_e4m3* o = reinterpret_cast<__nv_fp8_e4m3*>(&out);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = from_f32<__nv_fp8_e4m3>(__bfloat162float(e[k]) * s);
    dst[i] = out;
  }
}

__global__ void dequantize_kernel(float* __restrict__ dst, const __nv_fp8_e4m3* __restrict__ src,
                                  const float* __restrict__ scale, int64_t n) {
  const float s = *scale;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = to_f32(src[i]) * s;
}

// One thread per V bytes of an output pixel's channels (V = 16: one uint4; V = 1: a byte).
template <class V>
__global__ void subsample_kernel(V* __restrict__ dst, const V* __restrict__ src, int H, int W, int Ho, int Wo, int cv,
                                 int stride, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(i % cv);
    int64_t p = i / cv;  // output pixel (n, ho, wo)
    const int wo = static_cast<int>(p % Wo);
    p /= Wo;
    const int ho = static_cast<int>(p % Ho);
    const int64_t n = p / Ho;
    dst[i] = src[((n * H + int64_t{ho} * stride) * W + int64_t{wo} * stride) * cv + c];
  }
}

template <class T>
__global__ void fill_uniform_kernel(T* __restrict__ dst, int64_t n, uint32_t seed, float offset, float scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ (static_cast<uint32_t>(i >> 32) + seed * 0x9e3779b9u);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    dst[i] = from_f32<T>(offset + scale * (static_cast<float>(h >> 8) * (2.f / 16777216.f) - 1.f));
  }
}

}  // namespace

void fill_uniform(DType dtype, void* dst, int64_t n, uint32_t seed, cudaStream_t stream) {
  fill_uniform(dtype, dst, n, seed, 0.f, 1.f, stream);
}

void fill_uniform(DType dtype, void* dst, int64_t n, uint32_t seed, float offset, float scale, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = grid_stride_blocks(n, 256);
  if (dtype == DType::F8E4M3)
    fill_uniform_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(dst), n, seed, offset, scale);
  else
    LAPTIME_DISPATCH_FLOAT(
        dtype, fill_uniform_kernel<<<blocks, 256, 0, stream>>>(static_cast<scalar_t*>(dst), n, seed, offset, scale));
  CUDA_CHECK_LAUNCH();
}

void amax_forward(float* amax, DType dtype, const void* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, amax_kernel<scalar_t>
                         <<<grid_stride_blocks(n, 256), 256, 0, stream>>>(amax, static_cast<const scalar_t*>(x), n));
  CUDA_CHECK_LAUNCH();
}

namespace {
enum class Path { Auto, General };

void quantize(void* dst, const float* inv_scale, DType src_dtype, const void* src, int64_t n, Path path,
              cudaStream_t stream) {
  if (n == 0) return;
  auto* d = static_cast<__nv_fp8_e4m3*>(dst);
  const bool vec = path == Path::Auto && src_dtype == DType::BF16 && n % 8 == 0 &&
                   (reinterpret_cast<uintptr_t>(src) % 16 == 0) && (reinterpret_cast<uintptr_t>(dst) % 8 == 0);
  if (vec) {
    quantize_bf16_vec8_kernel<<<grid_stride_blocks(n / 8, 256), 256, 0, stream>>>(
        static_cast<uint2*>(dst), inv_scale, static_cast<const uint4*>(src), n / 8);
  } else {
    LAPTIME_DISPATCH_FLOAT(src_dtype, quantize_kernel<scalar_t><<<grid_stride_blocks(n, 256), 256, 0, stream>>>(
                                          d, inv_scale, static_cast<const scalar_t*>(src), n));
  }
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void quantize_fp8(void* dst, const float* inv_scale, DType src_dtype, const void* src, int64_t n, cudaStream_t stream) {
  quantize(dst, inv_scale, src_dtype, src, n, Path::Auto, stream);
}

void quantize_fp8_general(void* dst, const float* inv_scale, DType src_dtype, const void* src, int64_t n,
                          cudaStream_t stream) {
  quantize(dst, inv_scale, src_dtype, src, n, Path::General, stream);
}

void subsample_bytes(void* dst, const void* src, int N, int H, int W, int C, int stride, cudaStream_t stream) {
  const int Ho = (H - 1) / stride + 1, Wo = (W - 1) / stride + 1;
  const int64_t pixels = int64_t{N} * Ho * Wo;
  if (pixels == 0 || C == 0) return;
  const bool vec = C % 16 == 0 && (reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) % 16 == 0;
  if (vec) {
    const int64_t total = pixels * (C / 16);
    subsample_kernel<<<grid_stride_blocks(total, 256), 256, 0, stream>>>(
        static_cast<uint4*>(dst), static_cast<const uint4*>(src), H, W, Ho, Wo, C / 16, stride, total);
  } else {
    const int64_t total = pixels * C;
    subsample_kernel<<<grid_stride_blocks(total, 256), 256, 0, stream>>>(
        static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), H, W, Ho, Wo, C, stride, total);
  }
  CUDA_CHECK_LAUNCH();
}

void dequantize_fp8(float* dst, const void* src, const float* scale, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  dequantize_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>(dst, static_cast<const __nv_fp8_e4m3*>(src), scale,
                                                                    n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
