#include "bench/lab/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "core/check.h"
#include "core/stats.h"
#include "core/timing.h"
#include "kernels/lab/gpu_wait.h"

namespace laptime::lab {
namespace {

constexpr int kBatch = 25;
constexpr int kWarmup = 3;
constexpr int kResamples = 2000;

// The rows a check compares (see measure.h).
std::vector<int64_t> rows_to_check(const LabCase& c, uint64_t seed) {
  const int64_t rows = c.rows(), most = c.max_checked_rows();
  std::vector<int64_t> v;
  if (rows <= most) {
    for (int64_t r = 0; r < rows; ++r) v.push_back(r);
    return v;
  }
  v = {0, rows - 1};
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> pick(1, rows - 2);
  while (static_cast<int64_t>(v.size()) < most) v.push_back(pick(gen));
  return v;
}

std::string element_text(const LabCase& c, size_t i) {
  std::ostringstream os;
  os << "[" << static_cast<int64_t>(i) / c.row_width() << ", " << static_cast<int64_t>(i) % c.row_width() << "]";
  return os.str();
}

}  // namespace

CheckRow check_version(LabCase& c, int index, const Context& ctx, double bound, uint64_t seed, double floor) {
  c.reset(ctx.stream());
  c.run(index, ctx);
  return compare_outputs(c, ctx.stream(), bound, seed, floor);
}

CheckRow compare_outputs(LabCase& c, cudaStream_t s, double bound, uint64_t seed, double floor) {
  CheckRow row;
  row.bound = bound;
  row.rows = c.rows();
  const std::vector<float> out = c.outputs(s);  // synchronizes: a fault of the call is reported here
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i])) {
      row.rel_error = NAN;
      row.detail = "output " + element_text(c, i) + " is " + (std::isnan(out[i]) ? "NaN" : "infinite") +
                   " (never written, or not finite)";
      return row;
    }
  const int64_t w = c.row_width();
  std::vector<float> ref(static_cast<size_t>(w));
  double num = 0, den = 0, worst = -1;
  size_t worst_i = 0;
  float worst_ref = 0;
  const std::vector<int64_t> rows = rows_to_check(c, seed);
  for (int64_t r : rows) {
    c.reference(r, out, ref.data());
    for (int64_t j = 0; j < w; ++j) {
      const size_t i = static_cast<size_t>(r * w + j);
      const double d = double(out[i]) - ref[static_cast<size_t>(j)];
      num += d * d;
      const double mag = std::max(std::fabs(double(ref[static_cast<size_t>(j)])), floor);
      den += mag * mag;
      if (std::fabs(d) > worst) worst = std::fabs(d), worst_i = i, worst_ref = ref[static_cast<size_t>(j)];
    }
  }
  row.rows_checked = static_cast<int64_t>(rows.size());
  row.rel_error = std::sqrt(num / (den > 0 ? den : 1.0));
  row.passed = row.rel_error <= bound;
  if (!row.passed) {
    std::ostringstream os;
    os.precision(7);
    os << "worst " << element_text(c, worst_i) << ": got " << out[worst_i] << ", want " << worst_ref;
    row.detail = os.str();
  }
  return row;
}

L2Flush::L2Flush(const Context& ctx)
    : buf_(std::max<std::size_t>(2 * static_cast<std::size_t>(ctx.props().l2CacheSize), std::size_t{64} << 20)) {}

void L2Flush::run(cudaStream_t stream) const { CUDA_CHECK(cudaMemsetAsync(buf_.data(), 0x5a, buf_.bytes(), stream)); }

Timing median_interval(std::vector<double> ms, uint64_t seed) {
  Timing t;
  t.runs = static_cast<int>(ms.size());
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  t.median_ms = stats::percentile_sorted(ms, 0.5);
  const stats::MedianDraws d = stats::draw_resampled_medians(ms.size(), kResamples, seed);
  std::vector<double> medians(d.lo.size());
  for (size_t r = 0; r < medians.size(); ++r) medians[r] = (ms[d.lo[r]] + ms[d.hi[r]]) / 2;
  std::sort(medians.begin(), medians.end());
  t.lo_ms = stats::percentile_sorted(medians, 0.025);
  t.hi_ms = stats::percentile_sorted(medians, 0.975);
  return t;
}

std::string stopping_rule(const TimingPolicy& p) {
  std::ostringstream os;
  os.precision(3);
  os << "at least " << p.min_runs << " calls (5 for the slowest), then batches until the median's 95% bootstrap "
     << "interval is within ±" << 100 * p.target << "% of it, at most " << p.max_runs << " calls or " << p.max_seconds
     << " s";
  return os.str();
}

Timing time_calls(const Context& ctx, const std::function<void()>& call, const std::function<void()>& before,
                  const L2Flush* flush, const TimingPolicy& p, uint64_t seed) {
  const cudaStream_t s = ctx.stream();
  const EventPool events(2 * kBatch);
  const auto prelude = [&] {
    before();
    if (flush) flush->run(s);
  };
  for (int i = 0; i < kWarmup; ++i) {
    prelude();
    if (i + 1 == kWarmup) CUDA_CHECK(cudaEventRecord(events[0], s));
    call();
  }
  CUDA_CHECK(cudaEventRecord(events[1], s));
  CUDA_CHECK(wait_event(events[1]));
  float first = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&first, events[0], events[1]));
  // A version slow enough that a batch would pass half the time allowed takes smaller batches
  // (at least 5 calls): amax v1's serialised atomics take a tenth of a second a call.
  const int batch = std::clamp(static_cast<int>(p.max_seconds * 1e3 / 2 / std::max(first, 1e-3f)), 5, kBatch);
  const int min_runs = std::min(p.min_runs, batch);
  std::vector<double> ms;
  const auto start = std::chrono::steady_clock::now();
  Timing t;
  while (true) {
    for (int k = 0; k < batch; ++k) {
      prelude();
      CUDA_CHECK(cudaEventRecord(events[2 * k], s));
      call();
      CUDA_CHECK(cudaEventRecord(events[2 * k + 1], s));
    }
    CUDA_CHECK(wait_event(events[2 * batch - 1]));
    for (int k = 0; k < batch; ++k) {
      float e = 0.f;
      CUDA_CHECK(cudaEventElapsedTime(&e, events[2 * k], events[2 * k + 1]));
      ms.push_back(e);
    }
    const int n = static_cast<int>(ms.size());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (n < min_runs && n < p.max_runs && seconds < p.max_seconds) continue;
    t = median_interval(ms, seed);
    t.converged = (t.hi_ms - t.lo_ms) / 2 <= p.target * t.median_ms;
    if (t.converged || n >= p.max_runs || seconds >= p.max_seconds) return t;
  }
}

}  // namespace laptime::lab
