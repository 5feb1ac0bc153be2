#include "tests/reference/gpt2_fp8_ref.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "tests/reference/fp8_ref.h"

namespace laptime::ref {
namespace {

float amax_of(const Vec& v) {
  float a = 0.f;
  for (float x : v) a = std::max(a, std::fabs(x));
  return a;
}

// s · e4m3(v · (1/s)), the value the device's e4m3 operand stands for; 1/s in float, as the
// device holds it (layers/fp8_weight.h).
Vec rounded(const Vec& v, float s) {
  const float inv = 1.f / s;
  Vec q(v.size());
  for (size_t i = 0; i < v.size(); ++i) q[i] = static_cast<float>(double(s) * round_e4m3(v[i] * inv));
  return q;
}

}  // namespace

Fp8Recipe::Fp8Recipe(float margin) : margin_(margin) {
  record_ = [this](const std::string& name, const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out) {
    float& a = amax_x_[name];
    a = std::max(a, amax_of(x));
    return linear(x, W, b, rows, in, out);
  };
  e4m3_ = [this](const std::string& name, const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out) {
    float s_x = 1.f;
    if (const auto it = scale_x_.find(name); it != scale_x_.end()) {
      s_x = it->second;
    } else {
      const float a = amax_x_.at(name);  // throws when the calibration pass never saw this layer
      if (a > 0.f) s_x = margin_ * a / 448.f;
    }
    Vec w16(W.size());
    for (size_t i = 0; i < W.size(); ++i) w16[i] = round_bf16(W[i]);
    const float aw = amax_of(w16);
    const float s_w = aw > 0.f ? aw / 448.f : 1.f;
    return linear(rounded(x, s_x), rounded(w16, s_w), b, rows, in, out);
  };
}

Vec gpt2_fp8(const std::vector<int32_t>& tokens, const std::vector<int32_t>& calibration, const HostWeights& w,
             int n_layer, int n_head, int C, int vocab, float eps, int B, int T, float margin) {
  Fp8Recipe recipe(margin);  // not const: record() writes its amax
  gpt2(calibration, w, n_layer, n_head, C, vocab, eps, B, T, &recipe.record());
  return gpt2(tokens, w, n_layer, n_head, C, vocab, eps, B, T, &recipe.e4m3());
}

SmallGpt2::SmallGpt2(uint64_t seed) {
  config.n_layer = 3;
  config.n_head = 2;
  config.n_embd = 128;
  config.vocab_size = 301;
  config.n_ctx = 64;
  weights = random_gpt2_weights(config, seed);
  std::mt19937 gen(static_cast<uint32_t>(seed));
  auto draw = [&] {
    std::vector<int32_t> t(static_cast<size_t>(B) * T);
    for (int32_t& id : t) id = std::uniform_int_distribution<int32_t>(0, config.vocab_size - 1)(gen);
    return t;
  };
  calibration = draw();
  tokens = draw();
}

Vec SmallGpt2::exact() const {
  const GPT2Config& c = config;
  return gpt2(tokens, weights, c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.layer_norm_epsilon, B, T);
}

Vec SmallGpt2::fp8(float margin) const {
  const GPT2Config& c = config;
  return gpt2_fp8(tokens, calibration, weights, c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.layer_norm_epsilon, B, T,
                  margin);
}

}  // namespace laptime::ref
