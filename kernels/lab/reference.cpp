#include "kernels/lab/reference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace laptime::lab::ref {

void layernorm_row(float* y, const float* x, const float* w, const float* b, int64_t C, float eps) {
  double mean = 0;
  for (int64_t c = 0; c < C; ++c) mean += x[c];
  mean /= double(C);
  double var = 0;
  for (int64_t c = 0; c < C; ++c) var += (x[c] - mean) * (x[c] - mean);
  var /= double(C);
  const double rstd = 1.0 / std::sqrt(var + double(eps));
  for (int64_t c = 0; c < C; ++c) y[c] = static_cast<float>((x[c] - mean) * rstd * w[c] + b[c]);
}

double gelu(double x) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

void bias_gelu_row(float* y, const float* x, const float* bias, int64_t C) {
  for (int64_t c = 0; c < C; ++c) y[c] = static_cast<float>(gelu(double(x[c]) + double(bias[c])));
}

void attention_row(float* y, const float* qkv, int64_t T, int64_t H, int64_t hd, int64_t b, int64_t t) {
  const int64_t C = H * hd;
  const double scale = 1.0 / std::sqrt(double(hd));
  std::vector<double> s(static_cast<size_t>(t + 1));
  for (int64_t h = 0; h < H; ++h) {
    const float* q = qkv + (b * T + t) * 3 * C + h * hd;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j <= t; ++j) {
      const float* k = qkv + (b * T + j) * 3 * C + C + h * hd;
      double dot = 0;
      for (int64_t d = 0; d < hd; ++d) dot += double(q[d]) * k[d];
      s[static_cast<size_t>(j)] = dot * scale;
      m = std::max(m, s[static_cast<size_t>(j)]);
    }
    double sum = 0;
    for (int64_t j = 0; j <= t; ++j) sum += s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - m);
    for (int64_t d = 0; d < hd; ++d) {
      double o = 0;
      for (int64_t j = 0; j <= t; ++j) o += s[static_cast<size_t>(j)] * qkv[(b * T + j) * 3 * C + 2 * C + h * hd + d];
      y[h * hd + d] = static_cast<float>(o / sum);
    }
  }
}

void embedding_row(float* y, const float* wte, const float* wpe, int32_t token, int64_t t, int64_t C) {
  for (int64_t c = 0; c < C; ++c) y[c] = static_cast<float>(double(wte[int64_t{token} * C + c]) + wpe[t * C + c]);
}

void add_row(float* y, const float* x, const float* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(double(x[i]) + r[i]);
}

float e4m3_value(uint8_t bits) {
  const int e = (bits >> 3) & 0xf, m = bits & 7;
  if (e == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
  const double mag = e == 0 ? m * std::ldexp(1.0, -9) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
  return static_cast<float>(bits & 0x80 ? -mag : mag);
}

float e4m3_round(float v) {
  if (std::isnan(v)) return v;
  // The non-negative finite encodings 0x00 .. 0x7e, ascending in value as in bits.
  static const std::array<float, 127> table = [] {
    std::array<float, 127> t{};
    for (int i = 0; i < 127; ++i) t[static_cast<size_t>(i)] = e4m3_value(static_cast<uint8_t>(i));
    return t;
  }();
  const double a = std::fabs(double(v));
  int pick = 126;  // saturated: 448
  if (a < table[126]) {
    // table[lo] <= a < table[lo + 1]
    const int lo = static_cast<int>(std::upper_bound(table.begin(), table.end(), a) - table.begin()) - 1;
    const double below = a - table[static_cast<size_t>(lo)], above = table[static_cast<size_t>(lo) + 1] - a;
    pick = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);  // a tie: the even mantissa
  }
  const float mag = table[static_cast<size_t>(pick)];
  return std::signbit(v) ? -mag : mag;
}

void quantize_row(float* q, const float* x, float inv_scale, int64_t C) {
  for (int64_t c = 0; c < C; ++c) {
    const volatile float product = x[c] * inv_scale;  // rounded to float, as the device's fmul
    q[c] = e4m3_round(product);
  }
}

float amax(const float* x, int64_t n) {
  float m = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    m = std::max(m, std::fabs(x[i]));
  }
  return m;
}

void avgpool_image(float* y, const float* in, int64_t HW, int64_t C, int64_t n) {
  for (int64_t c = 0; c < C; ++c) {
    double s = 0;
    for (int64_t p = 0; p < HW; ++p) s += in[(n * HW + p) * C + c];
    y[c] = static_cast<float>(s / static_cast<double>(HW));
  }
}

void maxpool_pixel(float* y, const float* in, int64_t H, int64_t W, int64_t C, int64_t n, int64_t ho, int64_t wo) {
  for (int64_t c = 0; c < C; ++c) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t h = 2 * ho - 1; h <= 2 * ho + 1; ++h)
      for (int64_t w = 2 * wo - 1; w <= 2 * wo + 1; ++w)
        if (h >= 0 && h < H && w >= 0 && w < W) m = std::max(m, in[((n * H + h) * W + w) * C + c]);
    y[c] = m;
  }
}

void stem_pixel(float* y, const float* in, const float* w, const float* bias, int64_t Hs, int64_t C, int64_t n,
                int64_t py, int64_t px) {
  const int64_t So = Hs - 3;
  for (int64_t o = 0; o < C; ++o) {
    double m = 0;  // ReLU's floor, and every window holds a conv pixel
    for (int64_t yy = 2 * py - 1; yy <= 2 * py + 1; ++yy)
      for (int64_t xx = 2 * px - 1; xx <= 2 * px + 1; ++xx) {
        if (yy < 0 || yy >= So || xx < 0 || xx >= So) continue;
        double acc = bias[o];
        for (int64_t a = 0; a < 4; ++a)
          for (int64_t b = 0; b < 4; ++b)
            for (int64_t c = 0; c < 16; ++c)
              acc += double(in[((n * Hs + yy + a) * Hs + xx + b) * 16 + c]) * w[((o * 4 + a) * 4 + b) * 16 + c];
        m = std::max(m, acc);
      }
    y[o] = static_cast<float>(m);
  }
}

void conv_epilogue_row(float* y, const float* y0, const float* bias, const float* residual, int64_t C, bool relu) {
  for (int64_t c = 0; c < C; ++c) {
    double v = double(y0[c]) + bias[c] + (residual ? double(residual[c]) : 0.0);
    y[c] = static_cast<float>(relu && v < 0 ? 0.0 : v);
  }
}

}  // namespace laptime::lab::ref
