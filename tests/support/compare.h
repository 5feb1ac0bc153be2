// Test support: relative L2 comparison with a useful failure message, GPU skipping, fresh
// seeds, and host<->device copies in any storage type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/context.h"
#include "core/dtype.h"

namespace laptime::test {

// Skips the current test, visibly, when no GPU can be used.
#define LAPTIME_REQUIRE_GPU()                                                 \
  do {                                                                        \
    std::string why_;                                                         \
    if (!::laptime::gpu_available(&why_)) GTEST_SKIP() << "no GPU: " << why_; \
  } while (0)

// ‖out − ref‖ / ‖ref‖ in double; NaN when any output is not finite.
inline double rel_l2(const std::vector<float>& out, const std::vector<float>& ref) {
  if (out.size() != ref.size()) return NAN;
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return NAN;
    const double d = double(out[i]) - ref[i];
    num += d * d;
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1.0));
}

// Passes when rel_l2(out, ref) <= bound; otherwise reports the error and the worst elements.
inline ::testing::AssertionResult close(const std::vector<float>& out, const std::vector<float>& ref, double bound) {
  const double err = rel_l2(out, ref);
  if (err <= bound) return ::testing::AssertionSuccess() << "rel L2 " << err;
  std::ostringstream os;
  os << "rel L2 error " << err << " > bound " << bound << " (" << out.size() << " vs " << ref.size() << " elements)";
  if (out.size() == ref.size()) {
    std::vector<size_t> idx(out.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    auto bad = [&](size_t i) { return std::isfinite(out[i]) ? std::fabs(double(out[i]) - ref[i]) : INFINITY; };
    const size_t k = std::min<size_t>(5, idx.size());
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](size_t a, size_t b) { return bad(a) > bad(b); });
    for (size_t j = 0; j < k; ++j) os << "\n  [" << idx[j] << "] got " << out[idx[j]] << " want " << ref[idx[j]];
  }
  return ::testing::AssertionFailure() << os.str();
}

// A fresh seed per run (printed by the caller via SCOPED_TRACE so a failure can be replayed).
inline uint64_t fresh_seed() { return (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}(); }

inline std::vector<float> random_vec(size_t n, uint64_t seed, float scale = 1.f) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// Per-precision bounds for one layer (README.md's correctness bounds): fp32 1e-5, tf32 5e-3,
// bf16 3e-2; fp8 0.1 (e4m3's ~0.037 relative error on each product, tests/test_fp8_layers.cpp
// derives its own, tighter ones).
inline double layer_bound(Precision p) {
  switch (p) {
    case Precision::FP32:
      return 1e-5;
    case Precision::TF32:
      return 5e-3;
    case Precision::BF16:
      return 3e-2;
    case Precision::FP8:
      return 0.1;
  }
  return 0;
}

// n elements of `dtype` at `src` (device), widened to fp32 on the host. Synchronizes the device.
std::vector<float> download_f32(DType dtype, const void* src, size_t n);
// n bytes at `src` (device) as they are (e4m3 encodings). Synchronizes the device.
std::vector<uint8_t> download_bytes(const void* src, size_t n);
// The bytes `v` in a new device buffer (e4m3 encodings as they are). Synchronizes the device.
DeviceBuffer upload_bytes(const std::vector<uint8_t>& v);

// Base fixture of the GPU layer suites, parameterised by precision: skips without a GPU,
// draws a fresh seed (print it with SCOPED_TRACE), and owns a Context.
class PrecisionTest : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    seed = fresh_seed();
    ctx = std::make_unique<Context>();
  }
  Precision precision() const { return GetParam(); }
  DType dtype() const { return activation_dtype(GetParam()); }
  double bound() const { return layer_bound(GetParam()); }
  uint64_t seed = 0;
  std::unique_ptr<Context> ctx;
};

// Device copies of fp32 host data in the storage type of `dtype`, and back.
class DeviceArray {
 public:
  DeviceArray(DType dtype, size_t n);
  DeviceArray(DType dtype, const std::vector<float>& values);
  void poison();  // fills with NaN, so an element the kernel forgets to write fails the test
  std::vector<float> download() const;
  void* data() const { return buf_.data(); }
  size_t size() const { return n_; }

 private:
  DType dtype_;
  size_t n_;
  DeviceBuffer buf_;
};

}  // namespace laptime::test
