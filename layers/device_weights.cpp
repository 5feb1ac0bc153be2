#include "layers/device_weights.h"

#include <cmath>
#include <cstring>

#include <cuda_bf16.h>

#include "core/check.h"
#include "core/tensor.h"

namespace laptime {

void HostWeights::add(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
  HostTensor t{std::move(shape), std::move(values)};
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  require(n == static_cast<int64_t>(t.values.size()), "internal: tensor '" + name + "' of shape " + shape_str(t.shape) +
                                                          " has " + std::to_string(t.values.size()) + " values.");
  tensors_[name] = std::move(t);
}

void HostWeights::add_from(const SafeTensors& file, const std::string& name, const std::vector<int64_t>& shape) {
  const TensorInfo& info = file.get(name, shape);
  add(name, shape, file.to_float(info));
}

const HostTensor& HostWeights::at(const std::string& name) const {
  auto it = tensors_.find(name);
  require(it != tensors_.end(), "internal: weight '" + name + "' was never loaded.");
  return it->second;
}

int64_t HostWeights::param_count() const {
  int64_t n = 0;
  for (const auto& kv : tensors_) n += static_cast<int64_t>(kv.second.values.size());
  return n;
}

DeviceWeights::DeviceWeights(const Context& ctx, const HostWeights& host, DType dtype) : dtype_(dtype) {
  require(dtype == DType::F32 || dtype == DType::BF16,
          std::string("weights cannot be stored as ") + dtype_name(dtype) + ".");
  ArenaLayout layout;
  for (const auto& [name, t] : host.all()) {
    offsets_[name] = layout.reserve(t.values.size() * dtype_size(dtype));
    params_ += static_cast<int64_t>(t.values.size());
  }
  buffer_ = DeviceBuffer(layout.bytes());
  // The whole allocation's image on the host (the alignment gaps zero), then one copy.
  std::vector<std::byte> staging(layout.bytes());
  for (const auto& [name, t] : host.all()) {
    std::byte* dst = staging.data() + offsets_.at(name);
    const std::size_t n = t.values.size();
    if (dtype == DType::F32) {
      std::memcpy(dst, t.values.data(), n * sizeof(float));
    } else {
      auto* d16 = reinterpret_cast<__nv_bfloat16*>(dst);
      for (std::size_t i = 0; i < n; ++i) d16[i] = __float2bfloat16_rn(t.values[i]);
    }
  }
  if (staging.empty()) return;
  CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), staging.data(), staging.size(), cudaMemcpyHostToDevice, ctx.stream()));
  // The copy reads `staging`, which goes at the end of this scope: wait for it, once.
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

const void* DeviceWeights::get(const std::string& name) const {
  auto it = offsets_.find(name);
  require(it != offsets_.end(), "internal: weight '" + name + "' is not on the device.");
  return buffer_.as<std::byte>(it->second);
}

// xoshiro256** seeded through splitmix64: small, fast, and identical on every platform
// (std::normal_distribution is not specified bit-for-bit across standard libraries).
WeightRng::WeightRng(uint64_t seed) {
  for (uint64_t& s : state_) {
    seed += 0x9e3779b97f4a7c15ull;
    uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    s = z ^ (z >> 31);
  }
}

double WeightRng::next_uniform() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return (result >> 11) * 0x1.0p-53;  // [0, 1)
}

std::vector<float> WeightRng::uniform(int64_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * next_uniform());
  return v;
}

std::vector<float> WeightRng::normal(int64_t n, float mean, float std) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i += 2) {  // Box-Muller: two normals per pair of uniforms
    const double u1 = 1.0 - next_uniform(), u2 = next_uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    v[i] = static_cast<float>(mean + std * r * std::cos(2 * M_PI * u2));
    if (i + 1 < n) v[i + 1] = static_cast<float>(mean + std * r * std::sin(2 * M_PI * u2));
  }
  return v;
}

}  // namespace laptime
