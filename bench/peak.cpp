// `laptime peak`: see bench/peak.h.
#include "bench/peak.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/buffer.h"
#include "core/check.h"
#include "core/context.h"
#include "core/os.h"
#include "core/output_file.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"
#include "layers/gemm.h"
#include "layers/linear.h"
#include "trace/model/error.h"
#include "trace/read/sidecars.h"

namespace laptime {
namespace {

constexpr int kGemmSide = 8192;
constexpr std::size_t kCopyBytes = std::size_t{1} << 30;
constexpr int kWarmup = 3, kRuns = 10;

// The shortest of kRuns timed runs of `work` after kWarmup untimed ones, in seconds; each run
// between two events on the context's stream (core/timing.h's time_enqueued).
double best_seconds(const Context& ctx, const std::function<void()>& work) {
  for (int i = 0; i < kWarmup; ++i) work();
  const EventPool events(2);
  float best = 0;
  for (int i = 0; i < kRuns; ++i) {
    const float ms = time_enqueued(ctx.stream(), events, work);
    best = i == 0 ? ms : std::min(best, ms);
  }
  return best * 1e-3;
}

// Operands of varied, bounded values (a GEMM on zeros draws less power and may clock higher),
// copied up on the context's stream; waits for the copy (its host staging goes on return).
void fill(const Context& ctx, void* dst, DType t, std::size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / 16777216.f - 0.5f;
  }
  std::vector<uint16_t> h;  // bf16: the top half of each float
  if (t == DType::BF16) {
    h.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], sizeof bits);
      h[i] = static_cast<uint16_t>(bits >> 16);
    }
  }
  const void* src = h.empty() ? static_cast<const void*>(v.data()) : h.data();
  CUDA_CHECK(cudaMemcpyAsync(dst, src, n * dtype_size(t), cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

// fp8: e4m3 operands (uniform in [-1, 1), made on the device), bf16 out, per-tensor scales of 1,
// fp32 accumulation without fast accumulation: the product fp8's layers run (layers/linear.h).
double gemm_tflops(Context& ctx, Precision p) {
  const DType t = activation_dtype(p), ab = p == Precision::FP8 ? DType::F8E4M3 : t;
  const std::size_t n = std::size_t{kGemmSide} * kGemmSide;
  DeviceBuffer a(n * dtype_size(ab)), b(n * dtype_size(ab)), d(n * dtype_size(t));
  if (ab == DType::F8E4M3) {
    fill_uniform(ab, a.data(), static_cast<int64_t>(n), 1, ctx.stream());
    fill_uniform(ab, b.data(), static_cast<int64_t>(n), 2, ctx.stream());
  } else {
    fill(ctx, a.data(), t, n, 1);
    fill(ctx, b.data(), t, n, 2);
  }
  GemmSpec s;
  s.M = s.N = s.K = kGemmSide;
  s.b_layout = BLayout::NK;
  s.ab_dtype = ab;
  s.d_dtype = t;
  s.precision = p;
  const Gemm gemm(ctx.cublaslt(), s, ctx.workspace_bytes());
  const double sec = best_seconds(ctx, [&] { gemm.run(ctx, d.data(), a.data(), b.data()); });
  return 2.0 * kGemmSide * kGemmSide * double(kGemmSide) / sec / 1e12;
}

double copy_gbps(const Context& ctx) {
  DeviceBuffer src(kCopyBytes), dst(kCopyBytes);
  CUDA_CHECK(cudaMemsetAsync(src.data(), 1, kCopyBytes, ctx.stream()));
  const double sec = best_seconds(ctx, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), kCopyBytes, cudaMemcpyDeviceToDevice, ctx.stream()));
  });
  return 2.0 * kCopyBytes / sec / 1e9;  // read and written
}

std::string uuid_of(const cudaDeviceProp& p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::string s = "GPU-";
  char buf[4];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(buf, sizeof buf, "%02x", u[i]);
    s += buf;
  }
  return s;
}

void print(const trace::Ceilings& c, const std::string& path, bool cached) {
  std::printf("laptime peak: %s%s\n", c.gpu.c_str(), cached ? " (cached; --force measures again)" : "");
  std::printf("  bf16 GEMM    %8.1f TFLOP/s\n", c.bf16_tflops);
  std::printf("  tf32 GEMM    %8.1f TFLOP/s\n", c.tf32_tflops);
  std::printf("  fp32 GEMM    %8.1f TFLOP/s (strict, no TF32)\n", c.fp32_tflops);
  if (c.fp8_tflops > 0) std::printf("  fp8 GEMM     %8.1f TFLOP/s (e4m3 in, bf16 out)\n", c.fp8_tflops);
  std::printf("  device copy  %8.0f GB/s (read + written)\n", c.copy_gbps);
  std::printf("  ridge point  bf16 %.1f, tf32 %.1f, fp32 %.1f FLOP/byte\n", c.bf16_tflops * 1e3 / c.copy_gbps,
              c.tf32_tflops * 1e3 / c.copy_gbps, c.fp32_tflops * 1e3 / c.copy_gbps);
  std::printf("  measured     %s\n  file         %s\n", c.measured.c_str(), path.c_str());
}

}  // namespace

int run_peak(const PeakOptions& o) {
  Context ctx(o.device, StreamKind::Created, NvtxLevel::None);
  const cudaDeviceProp& p = ctx.props();
  const std::string path = o.cache.empty() ? trace::default_peak_path(p.name) : o.cache;
  if (!o.cache.empty()) check_outputs({{"ceilings", o.cache}}, {});  // before the measurement
  if (!o.force && path_exists(path)) {                               // not opened to look: a FIFO would block
    try {
      const trace::Ceilings c = trace::read_ceilings(path);
      // A file from before fp8 is measured again where fp8 runs.
      if (c.gpu == p.name && (c.fp8_tflops > 0 || !fp8_refusal(ctx).empty())) {
        print(c, path, true);
        return 0;
      }
    } catch (const trace::TraceError&) {
      // an unreadable cache is measured again and overwritten
    }
  }
  ctx.reserve_workspace(Context::kCublasLtWorkspace);
  trace::Ceilings c;
  c.gpu = p.name;
  c.uuid = uuid_of(p);
  c.bf16_tflops = gemm_tflops(ctx, Precision::BF16);
  c.tf32_tflops = gemm_tflops(ctx, Precision::TF32);
  c.fp32_tflops = gemm_tflops(ctx, Precision::FP32);
  if (fp8_refusal(ctx).empty()) c.fp8_tflops = gemm_tflops(ctx, Precision::FP8);  // sm_89+ only
  c.copy_gbps = copy_gbps(ctx);
  int sm_clock = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, ctx.device()));
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  c.measured = std::string(when) + ", cuBLASLt " + std::to_string(kGemmSide) +
               "^3 GEMM and 1 GiB device copy, best of " + std::to_string(kRuns) + ", max SM clock " +
               std::to_string(sm_clock / 1000) + " MHz";
  nlohmann::json j = trace::ceilings_to_json(c);
  j["method"] = {{"gemm_side", kGemmSide},
                 {"copy_bytes", kCopyBytes},
                 {"warmup", kWarmup},
                 {"runs", kRuns},
                 {"statistic", "best"}};
  if (o.cache.empty()) {  // the default cache folder is made; a --cache folder must exist
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  }
  try {  // a temporary beside the target, renamed when complete (core/output_file.h)
    OutputFile out({"ceilings", path});
    out.write(j.dump(2) + "\n");
    out.commit();
  } catch (const OutputError& e) {
    throw Error(std::string(e.what()) + (o.cache.empty() ? " Pass --cache FILE." : ""));
  }
  print(c, path, false);
  return 0;
}

}  // namespace laptime
