#include "tests/reference/fp8_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace laptime::ref {

float round_e4m3(float x) {
  if (std::isnan(x)) return x;
  const float a = std::fabs(x);
  if (a >= 448.f) return std::copysign(448.f, x);  // saturate (464 and up would round past 448)
  // The spacing of e4m3 values around a: 2^(e - 3) in the binade [2^e, 2^(e+1)), e >= -6; the
  // subnormals share the spacing of the lowest binade, 2^-9.
  int e = 0;
  std::frexp(a, &e);  // a = f · 2^e, f in [0.5, 1): the binade is [2^(e-1), 2^e)
  const int binade = std::max(e - 1, -6);
  const double step = std::ldexp(1.0, binade - 3);
  const double q = double(a) / step;  // exact: a power-of-two division
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  return static_cast<float>(std::copysign(std::min(r * step, 448.0), double(x)));
}

uint8_t e4m3_bits(float x) {
  if (std::isnan(x)) return 0x7f;
  const float r = round_e4m3(x);
  const uint8_t sign = std::signbit(r) ? 0x80 : 0;
  const float a = std::fabs(r);
  if (a == 0.f) return sign;
  int e = 0;
  const double f = std::frexp(a, &e);  // a = f · 2^e
  const int exp = e - 1 + 7;           // biased exponent of 1.m · 2^(e-1)
  if (exp <= 0)                        // subnormal: a = m · 2^-9
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::lround(a / std::ldexp(1.0, -9))));
  const int mant = static_cast<int>(std::lround((f * 2 - 1) * 8));
  return static_cast<uint8_t>(sign | (exp << 3) | mant);
}

float e4m3_value(uint8_t bits) {
  const int exp = (bits >> 3) & 0xf, mant = bits & 7;
  if (exp == 15 && mant == 7) return NAN;
  const double v = exp == 0 ? std::ldexp(double(mant), -9) : std::ldexp(1.0 + mant / 8.0, exp - 7);
  return static_cast<float>(bits & 0x80 ? -v : v);
}

namespace {
void accumulate_error(const float* x, size_t n, float margin, double* num, double* den) {
  float amax = 0.f;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float s = amax > 0.f ? margin * amax / 448.f : 1.f, inv = 1.f / s;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(s) * round_e4m3(x[i] * inv) - x[i];
    *num += d * d;
    *den += double(x[i]) * x[i];
  }
}
}  // namespace

double e4m3_rel_error_per_tensor(const std::vector<float>& x, float margin) {
  double num = 0, den = 0;
  accumulate_error(x.data(), x.size(), margin, &num, &den);
  return std::sqrt(num / (den > 0 ? den : 1));
}

double e4m3_rel_error_per_row(const std::vector<float>& x, int rows, int cols) {
  double num = 0, den = 0;
  for (int r = 0; r < rows; ++r) accumulate_error(x.data() + size_t(r) * cols, cols, 1.f, &num, &den);
  return std::sqrt(num / (den > 0 ? den : 1));
}

}  // namespace laptime::ref
