#include "layers/gemm_tuner.h"

#include <chrono>
#include <sstream>

#include "core/check.h"
#include "core/timing.h"

namespace laptime {

void* GemmTuner::scratch(DeviceBuffer& buf, std::size_t bytes) {
  if (buf.bytes() < bytes) buf = DeviceBuffer(bytes);
  return buf.data();
}

void GemmTuner::tune(const Context& ctx, Gemm& gemm, const void* b, const void* bias) {
  const GemmSpec& s = gemm.spec();
  if (!time_algorithms_) return;
  if (s.batch != 1 || gemm.candidate_count() < 2) return;  // batched products: the heuristic's pick
  std::ostringstream key;
  key << s.M << ' ' << s.N << ' ' << s.K << ' ' << int(s.b_layout) << ' ' << int(s.ab_dtype) << ' ' << int(s.d_dtype)
      << ' ' << int(s.precision) << ' ' << int(s.epilogue) << ' ' << s.ldd << ' ' << s.fp8_fast_accum;
  const auto it = cache_.find(key.str());
  if (it != cache_.end()) {
    gemm.set_choice(it->second);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t a_bytes = std::size_t(s.M) * s.K * dtype_size(s.ab_dtype);
  const std::size_t d_bytes = std::size_t(s.M) * (s.ldd ? s.ldd : s.N) * dtype_size(s.d_dtype);
  void* a = scratch(a_, a_bytes);
  void* d = scratch(d_, d_bytes);
  // Finite operands (zeros): timing must not depend on NaN/denormal paths.
  CUDA_CHECK(cudaMemsetAsync(a, 0, a_bytes, ctx.stream()));
  float ms = 0.f;
  gemm.autotune(ctx, d, a, b, bias, &ms, launch());
  cache_.emplace(key.str(), gemm.choice());
  build_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

float GemmTuner::charge(const Context& ctx, const std::function<bool()>& run, std::string* why) const {
  const float gpu = time_candidate(ctx.stream(), run, why, launch());
  return replay_ == Replay::Graph ? gpu : eager_charge_ms(gpu, ctx.stream(), run, why);
}

}  // namespace laptime
