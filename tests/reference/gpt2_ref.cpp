#include "tests/reference/gpt2_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace laptime::ref {

Vec embedding(const std::vector<int32_t>& tokens, const Vec& wte, const Vec& wpe, int B, int T, int C) {
  Vec out(static_cast<size_t>(B) * T * C);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c)
        out[(static_cast<size_t>(b) * T + t) * C + c] = static_cast<float>(
            double(wte[static_cast<size_t>(tokens[b * T + t]) * C + c]) + wpe[static_cast<size_t>(t) * C + c]);
  return out;
}

Vec layernorm(const Vec& x, const Vec& weight, const Vec& bias, int rows, int C, float eps) {
  Vec y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * C];
    double mean = 0, var = 0;
    for (int c = 0; c < C; ++c) mean += row[c];
    mean /= C;
    for (int c = 0; c < C; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= C;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < C; ++c)
      y[static_cast<size_t>(r) * C + c] = static_cast<float>((row[c] - mean) * rstd * weight[c] + bias[c]);
  }
  return y;
}

Vec linear(const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out) {
  Vec y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[o];
      const float* xr = &x[static_cast<size_t>(r) * in];
      const float* wr = &W[static_cast<size_t>(o) * in];
      for (int i = 0; i < in; ++i) acc += double(xr[i]) * wr[i];
      y[static_cast<size_t>(r) * out + o] = static_cast<float>(acc);
    }
  return y;
}

float round_bf16(float x) {
  if (std::isnan(x)) return x;
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u += 0x7fff + ((u >> 16) & 1);  // to nearest, ties to even, on the 16 bits kept
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

Vec gelu(const Vec& x) {
  Vec y(x.size());
  const double k = std::sqrt(2.0 / M_PI);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
  }
  return y;
}

namespace {
// `<name>.weight` · x + `<name>.bias` through `gemm` when given.
Vec product(const GemmFn* gemm, const std::string& name, const Vec& x, const HostWeights& w, int rows, int in,
            int out) {
  const Vec& W = w.at(name + ".weight").values;
  const Vec& b = w.at(name + ".bias").values;
  return gemm ? (*gemm)(name, x, W, b, rows, in, out) : linear(x, W, b, rows, in, out);
}
}  // namespace

Vec attention(const Vec& x, const HostWeights& w, const std::string& prefix, int B, int T, int C, int n_head,
              const GemmFn* gemm) {
  const int hd = C / n_head;
  const Vec qkv = product(gemm, prefix + ".c_attn", x, w, B * T, C, 3 * C);
  Vec merged(static_cast<size_t>(B) * T * C);
  std::vector<double> p(T);
  const double scale = 1.0 / std::sqrt(double(hd));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < n_head; ++h)
      for (int i = 0; i < T; ++i) {
        auto q = [&](int d) { return double(qkv[(static_cast<size_t>(b) * T + i) * 3 * C + h * hd + d]); };
        auto k = [&](int j, int d) { return double(qkv[(static_cast<size_t>(b) * T + j) * 3 * C + C + h * hd + d]); };
        auto v = [&](int j, int d) {
          return double(qkv[(static_cast<size_t>(b) * T + j) * 3 * C + 2 * C + h * hd + d]);
        };
        double m = -INFINITY;
        for (int j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < hd; ++d) s += q(d) * k(j, d);
          p[j] = s * scale;
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - m));
        for (int d = 0; d < hd; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += p[j] / sum * v(j, d);
          merged[(static_cast<size_t>(b) * T + i) * C + h * hd + d] = static_cast<float>(o);
        }
      }
  return product(gemm, prefix + ".c_proj", merged, w, B * T, C, C);
}

Vec mlp(const Vec& x, const HostWeights& w, const std::string& prefix, int rows, int C, const GemmFn* gemm) {
  const Vec h = gelu(product(gemm, prefix + ".c_fc", x, w, rows, C, 4 * C));
  return product(gemm, prefix + ".c_proj", h, w, rows, 4 * C, C);
}

namespace {
Vec add(const Vec& a, const Vec& b) {
  Vec y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = static_cast<float>(double(a[i]) + b[i]);
  return y;
}
}  // namespace

Vec block(const Vec& x, const HostWeights& w, const std::string& p, int B, int T, int C, int n_head, float eps,
          const GemmFn* gemm) {
  const int rows = B * T;
  const Vec ln1 = layernorm(x, w.at(p + ".ln_1.weight").values, w.at(p + ".ln_1.bias").values, rows, C, eps);
  const Vec x1 = add(x, attention(ln1, w, p + ".attn", B, T, C, n_head, gemm));
  const Vec ln2 = layernorm(x1, w.at(p + ".ln_2.weight").values, w.at(p + ".ln_2.bias").values, rows, C, eps);
  return add(x1, mlp(ln2, w, p + ".mlp", rows, C, gemm));
}

Vec gpt2(const std::vector<int32_t>& tokens, const HostWeights& w, int n_layer, int n_head, int C, int vocab, float eps,
         int B, int T, const GemmFn* gemm) {
  Vec x = embedding(tokens, w.at("wte.weight").values, w.at("wpe.weight").values, B, T, C);
  for (int i = 0; i < n_layer; ++i) x = block(x, w, "h." + std::to_string(i), B, T, C, n_head, eps, gemm);
  const Vec xf = layernorm(x, w.at("ln_f.weight").values, w.at("ln_f.bias").values, B * T, C, eps);
  const Vec& wte = w.at("wte.weight").values;
  return gemm ? (*gemm)("lm_head", xf, wte, {}, B * T, C, vocab) : linear(xf, wte, {}, B * T, C, vocab);
}

}  // namespace laptime::ref
