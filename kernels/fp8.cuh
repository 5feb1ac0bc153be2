// fp8 (e4m3) helpers for the fp8 precision: the absolute maximum a calibration pass records,
// quantization of a bf16/fp32 tensor to e4m3 with a scale, and the way back (tests, checks).
//
// The scale convention (layers/linear.h has the recipe): a real value x is stored as
// q = e4m3(x / s), and x ≈ s · q. Kernels that quantize take the inverse 1/s, as a device
// pointer, so a scale can change (calibration) without re-recording a CUDA Graph; cuBLASLt's
// A/B_SCALE take s itself.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// The largest finite e4m3 magnitude.
constexpr float kE4M3Max = 448.f;

// *amax = max(*amax, max |x|) over n elements of `dtype` (F32 or BF16). Accumulates, so a
// calibration pass can run it once per batch into one slot; the caller zeroes *amax first. A
// NaN in x makes *amax NaN (the calibration then refuses the scale).
void amax_forward(float* amax, DType dtype, const void* x, int64_t n, cudaStream_t stream);

// dst[i] = e4m3(src[i] · *inv_scale), rounded to nearest even and saturated to ±448; n
// elements, src of `src_dtype` (F32 or BF16); dst 1 byte each.
void quantize_fp8(void* dst, const float* inv_scale, DType src_dtype, const void* src, int64_t n, cudaStream_t stream);
// The same with the general kernel alone (one element a thread-step, grid-stride): quantize_fp8's
// fallback, laptime lab's quantize v2.
void quantize_fp8_general(void* dst, const float* inv_scale, DType src_dtype, const void* src, int64_t n,
                          cudaStream_t stream);

// n elements of `dtype` (F32, BF16 or F8E4M3) drawn uniformly from [-1, 1) by a hash of the
// index and `seed`: operands for timing GEMM candidates (zeros would run faster than data).
void fill_uniform(DType dtype, void* dst, int64_t n, uint32_t seed, cudaStream_t stream);
// The same drawn from [offset - scale, offset + scale) (laptime lab's inputs).
void fill_uniform(DType dtype, void* dst, int64_t n, uint32_t seed, float offset, float scale, cudaStream_t stream);

// A 1×1 stride-`stride` convolution's input rows, gathered: dst [N, Ho, Wo, C] = src [N, H, W, C]
// at (s·ho, s·wo), Ho = (H − 1) / s + 1; one byte an element (e4m3, or any 1-byte type), moved
// 16 bytes a thread where C and the pointers allow. What an fp8 GEMM takes as its A (ResNet-50's
// stride-2 downsamples on the e4m3 stream, layers/resnet50/e4m3_block.h).
void subsample_bytes(void* dst, const void* src, int N, int H, int W, int C, int stride, cudaStream_t stream);

// dst[i] = float(src[i]) · *scale: e4m3 back to fp32 (for checks; nothing in a forward pass).
void dequantize_fp8(float* dst, const void* src, const float* scale, int64_t n, cudaStream_t stream);

}  // namespace laptime
