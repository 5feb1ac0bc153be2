// Bias + residual + ReLU, elementwise over an NHWC tensor, in one read and one write. Where C is
// a whole number of 16-byte vectors and the pointers are 16-byte aligned, each thread-step
// takes 8 bf16 or 4 fp32 channels of one pixel (the bias's too); otherwise a grid-stride loop
// over the flat index, the channel index % C (the bias read is a broadcast that stays in L1).
// The activation is a template parameter so the ReLU test is resolved at compile time.
#include "kernels/conv_epilogue.cuh"

#include <algorithm>

#include "core/check.h"
#include "kernels/common.cuh"

namespace laptime {
namespace {

constexpr int kThreads = 256;

template <class T, bool kRelu>
__global__ void conv_epilogue_kernel(T* __restrict__ y, const T* __restrict__ bias, const T* __restrict__ residual,
                                     int64_t n, int C) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = to_f32(y[i]) + to_f32(bias[i % C]);
    if (residual) v += to_f32(residual[i]);
    y[i] = from_f32<T>(kRelu ? fmaxf(v, 0.f) : v);
  }
}

// n_vec vectors of kVec elements; C / kVec vectors a row.
template <class T, bool kRelu>
__global__ void conv_epilogue_vec_kernel(T* __restrict__ y, const T* __restrict__ bias, const T* __restrict__ residual,
                                         int64_t n_vec, int c_vec) {
  constexpr int kVec = 16 / sizeof(T);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_vec;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint4 raw = reinterpret_cast<const uint4*>(y)[i];
    const uint4 b_raw = reinterpret_cast<const uint4*>(bias)[i % c_vec];
    uint4 r_raw = make_uint4(0, 0, 0, 0);
    if (residual) r_raw = reinterpret_cast<const uint4*>(residual)[i];
    T* e = reinterpret_cast<T*>(&raw);
    const T* b = reinterpret_cast<const T*>(&b_raw);
    const T* r = reinterpret_cast<const T*>(&r_raw);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      float v = to_f32(e[k]) + to_f32(b[k]);
      if (residual) v += to_f32(r[k]);
      e[k] = from_f32<T>(kRelu ? fmaxf(v, 0.f) : v);
    }
    reinterpret_cast<uint4*>(y)[i] = raw;
  }
}

enum class Path { Auto, General };

template <class T, bool kRelu>
void launch(T* y, const T* b, const T* z, int64_t rows, int C, Path path, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const bool aligned =
      (reinterpret_cast<uintptr_t>(y) | reinterpret_cast<uintptr_t>(b) | reinterpret_cast<uintptr_t>(z)) % 16 == 0;
  if (path == Path::Auto && aligned && C % kVec == 0) {
    const int64_t n_vec = rows * (C / kVec);
    conv_epilogue_vec_kernel<T, kRelu>
        <<<grid_stride_blocks(n_vec, kThreads), kThreads, 0, stream>>>(y, b, z, n_vec, C / kVec);
  } else {
    const int64_t n = rows * C;
    conv_epilogue_kernel<T, kRelu><<<grid_stride_blocks(n, kThreads), kThreads, 0, stream>>>(y, b, z, n, C);
  }
}

void epilogue(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C, ConvActivation act,
              Path path, cudaStream_t stream) {
  if (rows * C == 0) return;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    auto* out = static_cast<scalar_t*>(y);
    const auto* b = static_cast<const scalar_t*>(bias);
    const auto* z = static_cast<const scalar_t*>(residual);
    if (act == ConvActivation::Relu)
      launch<scalar_t, true>(out, b, z, rows, C, path, stream);
    else
      launch<scalar_t, false>(out, b, z, rows, C, path, stream);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void conv_epilogue_forward(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C,
                           ConvActivation act, cudaStream_t stream) {
  epilogue(dtype, y, bias, residual, rows, C, act, Path::Auto, stream);
}

void conv_epilogue_forward_general(DType dtype, void* y, const void* bias, const void* residual, int64_t rows, int C,
                                   ConvActivation act, cudaStream_t stream) {
  epilogue(dtype, y, bias, residual, rows, C, act, Path::General, stream);
}

}  // namespace laptime
