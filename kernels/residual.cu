// The residual add and its fusion with the next LayerNorm (kernels/residual.cuh).
//
// residual_forward: a streaming kernel, one read of each input and one write. Each thread of a
// grid sized to the GPU takes two 16-byte vectors a step (8 bf16 or 4 fp32 each) and issues all
// four loads before it uses any, so two vectors' worth of bytes are in flight per thread; a
// scalar loop takes a ragged tail, and a scalar kernel any tensor that is not 16-byte aligned.
//
// residual_layernorm_forward: kernels/layernorm.cu's fast path (its registers sized to the row)
// with x + r in place of the row read: a warp loads its row of x and of r (16 bytes a load), adds
// them in registers, rounds the sum to the storage type (what the residual stream holds, and what
// an unfused LayerNorm would read back), writes it, and normalises the registers it still holds
// (layernorm_registers.cuh).
// x and x_out may be one buffer: each element is read and then written by the same thread.
#include "kernels/residual.cuh"

#include <initializer_list>

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/layernorm.cuh"
#include "kernels/layernorm_registers.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = 8;

template <class T>
__device__ __forceinline__ uint4 add_vec(uint4 a, const uint4 b) {
  constexpr int kVec = 16 / sizeof(T);
  T* ea = reinterpret_cast<T*>(&a);
  const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
  for (int k = 0; k < kVec; ++k) ea[k] = from_f32<T>(to_f32(ea[k]) + to_f32(eb[k]));
  return a;
}

template <class T>
__global__ void residual_vec_kernel(T* out, const T* x, const T* __restrict__ r, int64_t n) {
  constexpr int kVec = 16 / sizeof(T);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t n_vec = n / kVec;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const uint4* rv = reinterpret_cast<const uint4*>(r);
  uint4* ov = reinterpret_cast<uint4*>(out);
  int64_t v = first;
  for (; v + stride < n_vec; v += 2 * stride) {  // two vectors, stride apart, both loads first
    const uint4 x0 = xv[v], r0 = rv[v], x1 = xv[v + stride], r1 = rv[v + stride];
    ov[v] = add_vec<T>(x0, r0);
    ov[v + stride] = add_vec<T>(x1, r1);
  }
  if (v < n_vec) ov[v] = add_vec<T>(xv[v], rv[v]);
  for (int64_t i = n_vec * kVec + first; i < n; i += stride) out[i] = from_f32<T>(to_f32(x[i]) + to_f32(r[i]));
}

template <class T>
__global__ void residual_scalar_kernel(T* out, const T* x, const T* __restrict__ r, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = from_f32<T>(to_f32(x[i]) + to_f32(r[i]));
}

template <class T, int NV>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    residual_layernorm_kernel(T* x_out, T* __restrict__ y, const T* x, const T* __restrict__ r,
                              const T* __restrict__ weight, const T* __restrict__ bias, int rows, int C, float eps) {
  constexpr int kVec = 16 / sizeof(T);
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int n_vec = C / kVec;  // whole vectors, at most 32 · NV: the launcher checked
  const size_t base = static_cast<size_t>(row) * C;
  const uint4* xv = reinterpret_cast<const uint4*>(x + base);
  const uint4* rv = reinterpret_cast<const uint4*>(r + base);
  uint4* ov = reinterpret_cast<uint4*>(x_out + base);
  PackedRow<T, NV> sum;
#pragma unroll
  for (int i = 0; i < NV; ++i) {
    const int idx = i * 32 + lane;
    if (idx < n_vec) {
      const uint4 s = add_vec<T>(xv[idx], rv[idx]);  // rounded to T: the stream's value
      ov[idx] = s;
      sum.set(i, s);
    }
  }
  layernorm_registers(reinterpret_cast<OutVec<T, kVec>*>(y + base), sum, weight, bias, n_vec, C, eps, 1.f, lane);
}

bool aligned16(std::initializer_list<const void*> ptrs) {
  uintptr_t bits = 0;
  for (const void* p : ptrs) bits |= reinterpret_cast<uintptr_t>(p);
  return bits % 16 == 0;
}

}  // namespace

void residual_forward(DType dtype, void* out, const void* x, const void* r, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    constexpr int kVec = 16 / sizeof(scalar_t);
    auto* o = static_cast<scalar_t*>(out);
    const auto* a = static_cast<const scalar_t*>(x);
    const auto* b = static_cast<const scalar_t*>(r);
    const unsigned vec_blocks = grid_stride_blocks((n / kVec + 1) / 2 + 1, kThreads);  // two vectors a thread
    if (aligned16({out, x, r}))
      residual_vec_kernel<scalar_t><<<vec_blocks, kThreads, 0, stream>>>(o, a, b, n);
    else
      residual_scalar_kernel<scalar_t><<<grid_stride_blocks(n, kThreads), kThreads, 0, stream>>>(o, a, b, n);
  });
  CUDA_CHECK_LAUNCH();
}

void residual_layernorm_forward(DType dtype, void* x_out, void* y, const void* x, const void* r, const void* weight,
                                const void* bias, int rows, int C, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  const int vec = 16 / static_cast<int>(dtype_size(dtype));
  if (!aligned16({x_out, y, x, r, weight, bias}) || C % vec != 0 || C / vec > 32 * kLayerNormMaxVecPerLane) {
    residual_forward(dtype, x_out, x, r, static_cast<int64_t>(rows) * C, stream);
    layernorm_forward(dtype, y, x_out, weight, bias, rows, C, eps, stream);
    return;
  }
  LAPTIME_DISPATCH_FLOAT(dtype, with_vecs_per_lane(C / vec, [&](auto nv) {
                           residual_layernorm_kernel<scalar_t, decltype(nv)::value>
                               <<<ceil_div(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
                                   static_cast<scalar_t*>(x_out), static_cast<scalar_t*>(y),
                                   static_cast<const scalar_t*>(x), static_cast<const scalar_t*>(r),
                                   static_cast<const scalar_t*>(weight), static_cast<const scalar_t*>(bias), rows, C,
                                   eps);
                         }));
  CUDA_CHECK_LAUNCH();
}

}  // namespace laptime
