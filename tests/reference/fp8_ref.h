// The CPU reference for fp8 (e4m3): rounding written from the format's definition, not from
// CUDA's conversion, so the device kernels and cuBLASLt are checked against an independent
// model of what they should compute.
//
// OCP e4m3 ("fn"): sign, 4 exponent bits (bias 7), 3 mantissa bits; normal values 2^-6 to 448,
// subnormals down to 2^-9; no infinity; S.1111.111 is NaN. Rounding to nearest, ties to even,
// saturating to ±448 (what laptime's kernels do: kernels/common.cuh).
#pragma once

#include <cstdint>
#include <vector>

#include "tests/reference/gpt2_ref.h"  // round_bf16

namespace laptime::ref {

float round_e4m3(float x);       // the e4m3 value nearest x (ties to even), saturated to ±448; NaN stays NaN
uint8_t e4m3_bits(float x);      // its encoding
float e4m3_value(uint8_t bits);  // the value of an encoding (0x7f / 0xff: NaN)

// ‖q − x‖ / ‖x‖ for q = s · e4m3(x / s) with the per-tensor scale s = amax(x) · margin / 448.
double e4m3_rel_error_per_tensor(const std::vector<float>& x, float margin = 1.f);
// The same with one scale per row of a [rows, cols] matrix (per output channel of a weight).
double e4m3_rel_error_per_row(const std::vector<float>& x, int rows, int cols);

}  // namespace laptime::ref
