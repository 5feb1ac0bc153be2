// laptime_cutlass_probe: GPT-2's five GEMM shapes (c_attn, attn.c_proj, c_fc, mlp.c_proj, the LM
// head) at B8 T1024 and B1 T1024 (M = 8192 and 1024 rows) through every CUTLASS sm_90a kernel of
// this build (layers/cutlass/cutlass_gemm.h), beside the fastest cuBLASLt algorithm, each with the
// epilogue its layer runs: bias; bias + the residual (beta = 1, C = D in place) for the two
// projections; GELU + bias for c_fc; none for the head (N = 50304, the padded vocabulary). In bf16
// and fp8 (e4m3 operands with scales, bf16 out), and fp8 c_fc writing e4m3 with the next layer's
// scale (the MLP pair). The measurement before a kernel enters the model: which kernel would
// Gemm::autotune keep, and by how much. A development bench (docs/DESIGN-NOTES.md, "Development benches").
//
//   check  each CUTLASS kernel's output against cuBLASLt's on the same random operands (fresh
//          each case, values in [-1, 1)): the output poisoned with NaN first (or reset to the
//          residual), then rel L2 ‖D − D_cuBLASLt‖ / ‖D_cuBLASLt‖ over every element on the GPU,
//          NaN when an element is not finite. Bound: one unit in the last place of D's type
//          (2^-7 bf16, 2^-3 e4m3): two correct roundings of the same fp32 sum differ by at most
//          that; the fp32 sums' order and tanh's approximation are far below it.
//   time   cuBLASLt's candidates ranked as the tuner ranks them (core/timing.h's time_candidate);
//          then the best of them and every CUTLASS candidate timed alike: kGraphRuns runs captured
//          in one CUDA graph (core/timing.h's CudaGraph), kReplays timed replays, the median.
//
// Usage: laptime_cutlass_probe [--rows 8192,1024] [--json FILE]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <nlohmann/json.hpp>

#include "core/buffer.h"
#include "core/check.h"
#include "core/context.h"
#include "core/env_switches.h"
#include "core/output_file.h"
#include "core/stats.h"
#include "core/timing.h"
#include "kernels/convert.cuh"
#include "kernels/fp8.cuh"
#include "layers/cutlass/cutlass_gemm.h"
#include "layers/gemm.h"

namespace laptime {
namespace {

constexpr int kGraphRuns = 10;
constexpr int kReplays = 11;

struct Layer {
  const char* name;
  int N, K;
  Epilogue epilogue;
  bool residual;  // the projection adds into the residual stream (Accumulate::Add)
};
const Layer kLayers[] = {
    {"attn.c_attn", 2304, 768, Epilogue::Bias, false},  {"attn.c_proj", 768, 768, Epilogue::Bias, true},
    {"mlp.c_fc", 3072, 768, Epilogue::GeluBias, false}, {"mlp.c_proj", 768, 3072, Epilogue::Bias, true},
    {"lm_head", 50304, 768, Epilogue::None, false},
};

struct Variant {
  const char* name;
  DType ab, d;
};
const Variant kBf16{"bf16", DType::BF16, DType::BF16}, kFp8{"fp8", DType::F8E4M3, DType::BF16},
    kFp8Out8{"fp8 -> e4m3", DType::F8E4M3, DType::F8E4M3};

// sums[0] += Σ (out − ref)², sums[1] += Σ ref², sums[2] += count of non-finite outputs.
template <class T>
__global__ void diff_sums(const T* out, const T* ref, int64_t n, double* sums) {
  double dd = 0, rr = 0, bad = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float o = float(out[i]), r = float(ref[i]);
    if (!isfinite(o)) {
      bad += 1;
      continue;
    }
    dd += double(o - r) * double(o - r);
    rr += double(r) * r;
  }
  for (int off = 16; off > 0; off >>= 1) {
    dd += __shfl_down_sync(0xffffffffu, dd, off);
    rr += __shfl_down_sync(0xffffffffu, rr, off);
    bad += __shfl_down_sync(0xffffffffu, bad, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], dd);
    atomicAdd(&sums[1], rr);
    atomicAdd(&sums[2], bad);
  }
}

// rel L2 of `out` against `ref`, n elements of `dtype`; NaN when any output is not finite.
double rel_l2(DType dtype, const void* out, const void* ref, int64_t n, cudaStream_t st) {
  DeviceBuffer sums(3 * sizeof(double));
  CUDA_CHECK(cudaMemsetAsync(sums.data(), 0, sums.bytes(), st));
  if (dtype == DType::BF16)
    diff_sums<<<1024, 256, 0, st>>>(static_cast<const __nv_bfloat16*>(out), static_cast<const __nv_bfloat16*>(ref), n,
                                    sums.as<double>());
  else
    diff_sums<<<1024, 256, 0, st>>>(static_cast<const __nv_fp8_e4m3*>(out), static_cast<const __nv_fp8_e4m3*>(ref), n,
                                    sums.as<double>());
  CUDA_CHECK(cudaGetLastError());
  double h[3] = {};
  CUDA_CHECK(cudaMemcpyAsync(h, sums.data(), sizeof h, cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
  if (h[2] > 0) return NAN;
  return std::sqrt(h[0] / (h[1] > 0 ? h[1] : 1.0));
}

// Median GPU milliseconds of one run (see the top of this file); negative when it refuses.
double median_ms(cudaStream_t st, const std::function<void()>& run, std::string* why) {
  try {
    run();  // outside the capture: lazy loading, the launch's prepared parameters
    CudaGraph graph;
    graph.capture(st, [&] {
      for (int i = 0; i < kGraphRuns; ++i) run();
    });
    graph.launch(st);  // its upload, untimed
    const EventPool ev(2);
    std::vector<double> ms;
    for (int r = 0; r < kReplays; ++r) {
      CUDA_CHECK(cudaEventRecord(ev[0], st));
      graph.launch(st);
      CUDA_CHECK(cudaEventRecord(ev[1], st));
      CUDA_CHECK(cudaEventSynchronize(ev[1]));
      float t = 0.f;
      CUDA_CHECK(cudaEventElapsedTime(&t, ev[0], ev[1]));
      ms.push_back(double(t) / kGraphRuns);
    }
    return stats::median(ms);
  } catch (const Error& e) {
    (void)cudaGetLastError();
    *why = e.what();
    return -1;
  }
}

// Every operand of one case, carved from one allocation made for the largest case.
struct Operands {
  void *x, *w, *bias, *residual, *out, *ref;
  float* scales;  // s_x, s_w, d_scale, each in a 16-byte slot (cuBLASLt's alignment rule)
};

Operands carve(DeviceBuffer& pool, int64_t M, int64_t N, int64_t K) {
  ArenaLayout l;
  const std::size_t o_x = l.reserve(M * K * 2), o_w = l.reserve(N * K * 2), o_b = l.reserve(N * 2),
                    o_r = l.reserve(M * N * 2), o_o = l.reserve(M * N * 2), o_ref = l.reserve(M * N * 2),
                    o_s = l.reserve(64);
  if (pool.bytes() < l.bytes()) pool = DeviceBuffer(l.bytes());
  char* p = pool.as<char>();
  return {p + o_x, p + o_w, p + o_b, p + o_r, p + o_o, p + o_ref, reinterpret_cast<float*>(p + o_s)};
}

struct CutlassRow {
  std::string kernel, schedule, error;
  double ms = -1, rel_l2 = NAN;
  bool ok = false;
};
struct CaseResult {
  int M = 0;
  const Layer* layer = nullptr;
  const Variant* variant = nullptr;
  double cublaslt_ms = -1;
  std::vector<CutlassRow> cutlass;
  std::string autotune_pick;  // what Gemm::autotune keeps over all candidates
  double autotune_ms = -1;
};

// Poisoned output (NaN), or the residual again when the product adds into it.
void reset_output(const Operands& o, const Layer& L, DType d, int64_t n, cudaStream_t st) {
  if (L.residual)
    CUDA_CHECK(cudaMemcpyAsync(o.out, o.residual, n * 2, cudaMemcpyDeviceToDevice, st));
  else if (d == DType::BF16)
    fill_nan(DType::BF16, o.out, n, st);
  else
    CUDA_CHECK(cudaMemsetAsync(o.out, 0xff, n, st));  // 0xff: e4m3's NaN
}

CaseResult run_case(Context& ctx, DeviceBuffer& pool, int M, const Layer& L, const Variant& v, uint32_t seed) {
  const cudaStream_t st = ctx.stream();
  const int64_t n = int64_t{M} * L.N;
  const Operands o = carve(pool, M, L.N, L.K);
  const bool fp8 = v.ab == DType::F8E4M3;
  fill_uniform(v.ab, o.x, int64_t{M} * L.K, seed, st);
  fill_uniform(v.ab, o.w, int64_t{L.N} * L.K, seed + 1, st);
  fill_uniform(DType::BF16, o.bias, L.N, seed + 2, st);
  fill_uniform(DType::BF16, o.residual, n, seed + 3, st);
  // Scales that are not 1, so a kernel that ignored one would fail the check: s_x · s_w = 1/8
  // brings the sums near the bias's range; d_scale 16 spreads the GELU output over e4m3's.
  const float h_scales[12] = {0.5f, 0, 0, 0, 0.25f, 0, 0, 0, 16.f, 0, 0, 0};
  CUDA_CHECK(cudaMemcpyAsync(o.scales, h_scales, sizeof h_scales, cudaMemcpyHostToDevice, st));
  GemmSpec s;
  s.M = M;
  s.N = L.N;
  s.K = L.K;
  s.ab_dtype = v.ab;
  s.d_dtype = v.d;
  s.precision = fp8 ? Precision::FP8 : Precision::BF16;
  s.epilogue = L.epilogue;
  s.fp8_fast_accum = fp8 && env::fp8_fast_accum();  // as the layers run: fast unless LAPTIME_FP8_FAST_ACCUM=off
  if (fp8) {
    s.a_scale = o.scales;
    s.b_scale = o.scales + 4;
    s.d_scale = v.d == DType::F8E4M3 ? o.scales + 8 : nullptr;
  }
  Gemm g(ctx.cublaslt(), s, ctx.workspace_bytes());
  const float beta = L.residual ? 1.f : 0.f;
  const void* bias = L.epilogue == Epilogue::None ? nullptr : o.bias;
  auto run = [&] { g.run(ctx, o.out, o.x, o.w, bias, 1.f, beta); };
  CaseResult r;
  r.M = M;
  r.layer = &L;
  r.variant = &v;
  // cuBLASLt's best, ranked as the tuner ranks (time_candidate), then timed like the rest.
  const int n_cublas = g.candidate_count() - g.cutlass_candidate_count();
  int best = 0;
  float best_ms = -1.f;
  for (int i = 0; i < n_cublas; ++i) {
    g.set_choice(g.candidate(i));
    const float ms = time_candidate(st, [&] {
      run();
      return true;
    });
    if (ms >= 0.f && (best_ms < 0.f || ms < best_ms)) best = i, best_ms = ms;
  }
  g.set_choice(g.candidate(best));
  std::string why;
  reset_output(o, L, v.d, n, st);
  run();
  CUDA_CHECK(cudaMemcpyAsync(o.ref, o.out, n * dtype_size(v.d), cudaMemcpyDeviceToDevice, st));
  r.cublaslt_ms = median_ms(st, run, &why);
  for (int i = n_cublas; i < g.candidate_count(); ++i) {
    const Gemm::Choice c = g.candidate(i);
    g.set_choice(c);
    CutlassRow row;
    row.kernel = c.cutlass->name();
    row.schedule = schedule_name(c.schedule);
    try {
      reset_output(o, L, v.d, n, st);
      run();
      row.rel_l2 = rel_l2(v.d, o.out, o.ref, n, st);
      row.ok = row.rel_l2 <= (v.d == DType::BF16 ? 0x1p-7 : 0x1p-3);
      row.ms = median_ms(st, run, &row.error);
    } catch (const Error& e) {
      (void)cudaGetLastError();
      row.error = e.what();
    }
    r.cutlass.push_back(row);
  }
  float ms = 0.f;
  g.autotune(ctx, o.out, o.x, o.w, bias, &ms);
  r.autotune_pick = g.backend();
  r.autotune_ms = ms;
  return r;
}

double tflops(const CaseResult& r, double ms) { return ms > 0 ? 2.0 * r.M * r.layer->N * r.layer->K / (ms * 1e9) : 0; }

void print(const CaseResult& r) {
  std::printf("M=%-5d %-12s %-11s N=%5d K=%4d  cuBLASLt %8.1f us %6.0f TFLOP/s\n", r.M, r.layer->name, r.variant->name,
              r.layer->N, r.layer->K, r.cublaslt_ms * 1e3, tflops(r, r.cublaslt_ms));
  for (const CutlassRow& c : r.cutlass) {
    if (c.ms < 0) {
      std::printf("    %-56s %-26s FAILED: %s\n", c.kernel.c_str(), c.schedule.c_str(), c.error.substr(0, 200).c_str());
      continue;
    }
    std::printf("    %-56s %-26s %8.1f us %6.0f TFLOP/s  x%.3f  rel L2 %.2e %s\n", c.kernel.c_str(), c.schedule.c_str(),
                c.ms * 1e3, tflops(r, c.ms), r.cublaslt_ms / c.ms, c.rel_l2, c.ok ? "ok" : "WRONG");
  }
  std::printf("    autotune keeps: %s (%.1f us)\n", r.autotune_pick.c_str(), r.autotune_ms * 1e3);
}

nlohmann::json to_json(const CaseResult& r) {
  nlohmann::json j = {{"M", r.M},
                      {"layer", r.layer->name},
                      {"variant", r.variant->name},
                      {"N", r.layer->N},
                      {"K", r.layer->K},
                      {"cublaslt_ms", r.cublaslt_ms},
                      {"autotune_pick", r.autotune_pick},
                      {"autotune_ms", r.autotune_ms}};
  j["cutlass"] = nlohmann::json::array();
  for (const CutlassRow& c : r.cutlass)
    j["cutlass"].push_back({{"kernel", c.kernel},
                            {"schedule", c.schedule},
                            {"ms", c.ms},
                            {"rel_l2", std::isfinite(c.rel_l2) ? nlohmann::json(c.rel_l2) : nlohmann::json()},
                            {"ok", c.ok},
                            {"error", c.error}});
  return j;
}

int run(const std::vector<int>& rows, const std::string& json_path) {
  check_outputs({{"JSON report", json_path, true}}, {});
  Context ctx;
  const std::vector<const CutlassGemmKernel*> kernels = cutlass_gemm_kernels(ctx.device());
  std::printf("CUTLASS probe on %s (compute capability %d.%d): %zu CUTLASS kernels offered (%s)\n", ctx.props().name,
              ctx.props().major, ctx.props().minor, kernels.size(),
              cutlass_in_build() ? "this build holds sm_90a kernels" : "this build holds none");
  for (const CutlassGemmKernel* k : kernels) std::printf("  %s\n", k->name().c_str());
  nlohmann::json out = {{"device", ctx.props().name}, {"graph_runs", kGraphRuns}, {"replays", kReplays}};
  out["cases"] = nlohmann::json::array();
  DeviceBuffer pool;
  uint32_t seed = 1;
  int wrong = 0, failed = 0;  // candidates off by more than an ulp; candidates (or cases) that did not run
  for (int M : rows)
    for (const Layer& L : kLayers) {
      std::vector<const Variant*> variants = {&kBf16, &kFp8};
      if (L.epilogue == Epilogue::GeluBias) variants.push_back(&kFp8Out8);
      for (const Variant* v : variants) {
        CaseResult r;
        try {
          r = run_case(ctx, pool, M, L, *v, seed += 10);
        } catch (const Error& e) {  // a plan cuBLASLt refuses: the next case still runs
          std::printf("M=%-5d %-12s %-11s FAILED: %s\n", M, L.name, v->name, e.what());
          ++failed;
          continue;
        }
        print(r);
        std::fflush(stdout);
        for (const CutlassRow& c : r.cutlass) {
          wrong += c.ms >= 0 && !c.ok;
          failed += c.ms < 0;
        }
        out["cases"].push_back(to_json(r));
      }
    }
  if (!json_path.empty()) {
    OutputFile f({"JSON report", json_path, true});
    f.write(out.dump(1) + "\n");
    f.commit();
  }
  if (wrong) std::printf("%d CUTLASS candidates disagree with cuBLASLt beyond one ulp of their output\n", wrong);
  if (failed) std::printf("%d candidates or cases did not run (their lines say why)\n", failed);
  return wrong || failed ? 1 : 0;
}

}  // namespace
}  // namespace laptime

int main(int argc, char** argv) {
  std::vector<int> rows = {8192, 1024};
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows" && i + 1 < argc) {
      rows.clear();
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ','))
        if (!item.empty()) rows.push_back(std::atoi(item.c_str()));
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: laptime_cutlass_probe [--rows 8192,1024] [--json FILE]\n");
      return 2;
    }
  }
  for (int r : rows)
    if (r <= 0) {
      std::fprintf(stderr, "laptime_cutlass_probe: --rows takes positive row counts, separated by commas.\n");
      return 2;
    }
  try {
    return laptime::run(rows, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laptime_cutlass_probe: %s\n", e.what());
    return 1;
  }
}
