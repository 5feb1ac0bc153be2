#include "tests/reference/resnet50_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace laptime::ref {

Vec conv2d(const Vec& x, const Vec& w, int N, int H, int W, int Cin, int Cout, int k, int stride, int pad) {
  const int Ho = conv_out(H, k, stride, pad), Wo = conv_out(W, k, stride, pad);
  Vec y(static_cast<size_t>(N) * Ho * Wo * Cout);
  for (int n = 0; n < N; ++n)
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo)
        for (int co = 0; co < Cout; ++co) {
          double acc = 0;
          for (int r = 0; r < k; ++r) {
            const int h = ho * stride - pad + r;
            if (h < 0 || h >= H) continue;
            for (int s = 0; s < k; ++s) {
              const int ww = wo * stride - pad + s;
              if (ww < 0 || ww >= W) continue;
              const float* px = &x[((static_cast<size_t>(n) * H + h) * W + ww) * Cin];
              for (int ci = 0; ci < Cin; ++ci)
                acc += double(px[ci]) * w[((static_cast<size_t>(co) * Cin + ci) * k + r) * k + s];
            }
          }
          y[((static_cast<size_t>(n) * Ho + ho) * Wo + wo) * Cout + co] = static_cast<float>(acc);
        }
  return y;
}

Vec batchnorm(const Vec& x, const HostWeights& p, const std::string& bn, int C, float eps) {
  const Vec& g = p.at(bn + ".weight").values;
  const Vec& b = p.at(bn + ".bias").values;
  const Vec& mean = p.at(bn + ".running_mean").values;
  const Vec& var = p.at(bn + ".running_var").values;
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i % C;
    y[i] = static_cast<float>((double(x[i]) - mean[c]) / std::sqrt(double(var[c]) + eps) * g[c] + b[c]);
  }
  return y;
}

Vec relu(Vec x) {
  for (float& v : x) v = std::max(v, 0.f);
  return x;
}

Vec add(const Vec& a, const Vec& b) {
  Vec y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = static_cast<float>(double(a[i]) + b[i]);
  return y;
}

Vec maxpool3x3s2(const Vec& x, int N, int H, int W, int C) {
  const int Ho = conv_out(H, 3, 2, 1), Wo = conv_out(W, 3, 2, 1);
  Vec y(static_cast<size_t>(N) * Ho * Wo * C, -std::numeric_limits<float>::infinity());
  for (int n = 0; n < N; ++n)
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo)
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) {
            const int h = 2 * ho - 1 + r, w = 2 * wo - 1 + s;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            for (int c = 0; c < C; ++c) {
              float& out = y[((static_cast<size_t>(n) * Ho + ho) * Wo + wo) * C + c];
              out = std::max(out, x[((static_cast<size_t>(n) * H + h) * W + w) * C + c]);
            }
          }
  return y;
}

Vec global_avgpool(const Vec& x, int N, int H, int W, int C) {
  Vec y(static_cast<size_t>(N) * C);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      double sum = 0;
      for (int i = 0; i < H * W; ++i) sum += x[(static_cast<size_t>(n) * H * W + i) * C + c];
      y[static_cast<size_t>(n) * C + c] = static_cast<float>(sum / (H * W));
    }
  return y;
}

Vec linear(const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out) {
  Vec y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double acc = b[o];
      for (int i = 0; i < in; ++i)
        acc += double(x[static_cast<size_t>(r) * in + i]) * W[static_cast<size_t>(o) * in + i];
      y[static_cast<size_t>(r) * out + o] = static_cast<float>(acc);
    }
  return y;
}

Vec conv_bn(const Vec& x, const HostWeights& p, const std::string& conv, const std::string& bn, int N, int H, int W,
            int Cin, int Cout, int k, int stride, int pad, float eps, bool relu_after) {
  Vec y = batchnorm(conv2d(x, p.at(conv + ".weight").values, N, H, W, Cin, Cout, k, stride, pad), p, bn, Cout, eps);
  return relu_after ? relu(std::move(y)) : y;
}

Vec bottleneck(const Vec& x, const HostWeights& p, const std::string& prefix, int N, int H, int W, int Cin, int width,
               int stride, float eps) {
  const std::string& q = prefix;
  const int out = 4 * width, Ho = conv_out(H, 3, stride, 1), Wo = conv_out(W, 3, stride, 1);
  const Vec t1 = conv_bn(x, p, q + ".conv1", q + ".bn1", N, H, W, Cin, width, 1, 1, 0, eps, true);
  const Vec t2 = conv_bn(t1, p, q + ".conv2", q + ".bn2", N, H, W, width, width, 3, stride, 1, eps, true);
  const Vec t3 = conv_bn(t2, p, q + ".conv3", q + ".bn3", N, Ho, Wo, width, out, 1, 1, 0, eps, false);
  const bool project = stride != 1 || Cin != out;
  const Vec shortcut =
      project ? conv_bn(x, p, q + ".downsample.0", q + ".downsample.1", N, H, W, Cin, out, 1, stride, 0, eps, false)
              : x;
  return relu(add(t3, shortcut));
}

std::vector<BlockSpec> blocks(const ResNetConfig& cfg, int S) {
  std::vector<BlockSpec> v;
  int size = conv_out(conv_out(S, 7, 2, 3), 3, 2, 1), channels = cfg.base_width;
  for (int s = 0; s < 4; ++s)
    for (int b = 0; b < cfg.layers[s]; ++b) {
      const int width = cfg.base_width << s, stride = (s > 0 && b == 0) ? 2 : 1;
      const int out = conv_out(size, 3, stride, 1);
      v.push_back({"layer" + std::to_string(s + 1) + "." + std::to_string(b), channels, width, stride, size, out});
      size = out;
      channels = 4 * width;
    }
  return v;
}

Vec resnet50(const Vec& images, const HostWeights& p, const ResNetConfig& cfg, int N, int S) {
  const int w = cfg.base_width, s1 = conv_out(S, 7, 2, 3);
  Vec x = conv_bn(images, p, "conv1", "bn1", N, S, S, 3, w, 7, 2, 3, cfg.bn_eps, true);
  x = maxpool3x3s2(x, N, s1, s1, w);
  int size = conv_out(s1, 3, 2, 1), channels = w;
  for (const BlockSpec& b : blocks(cfg, S)) {
    x = bottleneck(x, p, b.prefix, N, b.in_size, b.in_size, b.in_channels, b.width, b.stride, cfg.bn_eps);
    size = b.out_size;
    channels = 4 * b.width;
  }
  const Vec pooled = global_avgpool(x, N, size, size, channels);
  return linear(pooled, p.at("fc.weight").values, p.at("fc.bias").values, N, channels, cfg.num_classes);
}

}  // namespace laptime::ref
