// Element-type conversions and fills on the device: logits are widened to fp32 before they are
// read back, test inputs narrowed from fp32 and outputs poisoned with NaN before each run.
// (Weights are converted on the host, in DeviceWeights' staging: one copy, no device pass.)
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

// dst: n elements of `dst_dtype`; src: n fp32 elements. F32 and BF16 destinations.
void convert_from_f32(DType dst_dtype, void* dst, const float* src, int64_t n, cudaStream_t stream);
// dst: n fp32 elements; src: n elements of `src_dtype` (F32 or BF16).
void convert_to_f32(float* dst, DType src_dtype, const void* src, int64_t n, cudaStream_t stream);
// Fills n elements of `dtype` (F32 or BF16) with quiet NaN.
void fill_nan(DType dtype, void* dst, int64_t n, cudaStream_t stream);

}  // namespace laptime
