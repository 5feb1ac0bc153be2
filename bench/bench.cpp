// `laptime bench`: loop forward passes and report the steady-state lap time.
//
// Each iteration is bracketed by two CUDA events on the context's stream; the lap time is
// their difference, so it measures the GPU timeline of one forward, launch gaps included.
// The host time spent enqueuing one forward is measured separately, after the loop, on an
// idle GPU: inside the loop a GPU-bound run fills the launch queue and every launch then
// waits for a free slot, so in-loop enqueue times just mirror the lap time. When the idle
// enqueue time approaches the lap time, the run is launch-bound. Warm-up iterations (module load, cuBLASLt/cuDNN
// first-call costs, clocks ramping) are marked in NVTX and kept out of the statistics.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <set>

#include <cudnn.h>
#include <nlohmann/json.hpp>
#include <nvtx3/nvToolsExtCudaRt.h>

#include "bench/cli.h"
#include "bench/interrupt.h"
#include "bench/stats.h"
#include "trace/cupti_tracer.h"
#include "trace/nsys_sqlite.h"
#include "trace/roofline.h"
#include "core/check.h"
#include "core/output_file.h"
#include "core/timing.h"

namespace laptime {
namespace {

std::string version_str(int v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string(v % major_div / minor_div);
}

}  // namespace

int run_bench(const BenchOptions& o) {
  // Outputs first, before any GPU work: a bad --json folder, an output onto --weights, or a
  // device as output is refused now, not after the whole benchmark (core/output_file.h).
  const std::vector<std::string> inputs{o.workload.weights};
  check_outputs({{"JSON report", o.json, true}, {"trace", o.trace}}, inputs);
  std::unique_ptr<OutputFile> json_out, trace_out;
  if (!o.json.empty()) json_out = std::make_unique<OutputFile>(OutputSpec{"JSON report", o.json, true}, inputs);
  if (!o.trace.empty()) trace_out = std::make_unique<OutputFile>(OutputSpec{"trace", o.trace}, inputs);
  // Ctrl-C ends the loop early; the iterations done so far are reported (bench/interrupt.h).
  const InterruptGuard interrupt;

  // --trace: CUPTI subscribes before the first CUDA call and becomes the NVTX injection before
  // the first NVTX call (NVTX looks its injection up once).
  std::unique_ptr<trace::CuptiTracer> tracer;
  if (!o.trace.empty()) {
    try {
      tracer = std::make_unique<trace::CuptiTracer>();
    } catch (const trace::TraceError& e) {
      throw Error(e.what());
    }
  }
  Context ctx(o.device, o.stream, o.nvtx);
  if (o.nvtx != NvtxLevel::None) {
    if (tracer && tracer->injects_nvtx()) {
      // Some CUPTI 13.0 builds crash in nvtxNameOsThreadA when CUPTI is the NVTX injection.
      tracer->name_current_thread("laptime main");
    } else {
      nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "laptime main");
      nvtxNameCudaStreamA(ctx.stream(), o.stream == StreamKind::Created ? "laptime stream" : "default stream");
    }
  }
  std::unique_ptr<Workload> w = make_workload(ctx, o.workload);
  const cudaDeviceProp& p = ctx.props();
  int driver = 0, runtime = 0, sm_clock = 0, mem_clock = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, ctx.device()));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, ctx.device()));
  const size_t cublas_loaded = cublasLtGetVersion(), cudnn_loaded = cudnnGetVersion();

  nlohmann::json report;
  report["schema"] = "laptime.bench/1";
  report["framework"] = "laptime";
  report["device"] = {{"name", p.name},
                      {"sm_count", p.multiProcessorCount},
                      {"sm_clock_mhz", sm_clock / 1000},
                      {"memory_clock_mhz", mem_clock / 1000},
                      {"memory_gib", p.totalGlobalMem / double(1u << 30)},
                      {"driver", version_str(driver, 1000, 10)},
                      {"cuda_runtime", version_str(runtime, 1000, 10)},
                      {"cublas_compiled", version_str(CUBLAS_VERSION, 10000, 100)},
                      {"cublas_loaded", version_str(static_cast<int>(cublas_loaded), 10000, 100)},
                      {"cudnn_compiled", version_str(CUDNN_VERSION, 10000, 100)},
                      {"cudnn_loaded", version_str(static_cast<int>(cudnn_loaded), 10000, 100)}};
  report["config"] = {{"model", o.workload.model},
                      {"pitfall", pitfall_name(o.pitfall)},
                      {"precision", precision_name(o.workload.precision)},
                      {"shape", w->shape()},
                      {"weights", w->weights_source()},
                      {"params", w->param_count()},
                      {"mode", o.graph == GraphMode::Graph ? "graph" : "eager"},
                      {"nvtx", nvtx_level_name(o.nvtx)},
                      {"stream", stream_name(o.stream)},
                      {"warmup", o.warmup},
                      {"iters", o.iters}};
  if (!w->variant().empty()) report["config"]["variant"] = w->variant();

  std::printf("laptime bench %s\n", o.workload.model.c_str());
  std::printf("  device      %s, %d SMs, SM clock %d MHz, memory clock %d MHz, %.0f GiB\n", p.name,
              p.multiProcessorCount, sm_clock / 1000, mem_clock / 1000, p.totalGlobalMem / double(1u << 30));
  std::printf("  software    driver %s, CUDA runtime %s, cuBLAS %s (built with %s), cuDNN %s (built with %s)\n",
              report["device"]["driver"].get<std::string>().c_str(),
              report["device"]["cuda_runtime"].get<std::string>().c_str(),
              report["device"]["cublas_loaded"].get<std::string>().c_str(),
              report["device"]["cublas_compiled"].get<std::string>().c_str(),
              report["device"]["cudnn_loaded"].get<std::string>().c_str(),
              report["device"]["cudnn_compiled"].get<std::string>().c_str());
  std::printf("  run         %s, %s, %s, nvtx=%s, stream=%s\n", precision_name(o.workload.precision), w->shape().c_str(),
              o.graph == GraphMode::Graph ? "CUDA Graph" : "eager", nvtx_level_name(o.nvtx),
              stream_name(o.stream).c_str());
  std::printf("  weights     %s, %.1f M parameters\n", w->weights_source().c_str(), w->param_count() / 1e6);
  if (!w->variant().empty()) std::printf("  variant     %s\n", w->variant().c_str());
  {
    const std::vector<std::string> plans = w->plan_report();
    for (std::size_t i = 0; i < plans.size(); ++i)
      std::printf("  %-11s %s\n", i == 0 ? "plans" : "", plans[i].c_str());
    if (!plans.empty()) report["config"]["plans"] = plans;
  }

  // A call that breaks capture (an allocation, a synchronization, a pageable copy) fails
  // inside forward() and is reported with its name and location.
  CudaGraph graph;
  if (o.graph == GraphMode::Graph) {
    try {
      graph.capture(ctx.stream(), [&] { w->forward(ctx); });
    } catch (const Error& e) {
      throw Error(std::string("CUDA Graph capture of forward() failed: ") + e.what());
    }
  }

  const int total = o.warmup + o.iters;
  EventPool events(2 * static_cast<size_t>(total));
  static const NvtxName forward_name("forward");
  auto run_once = [&] {
    if (o.graph == GraphMode::Graph)
      graph.launch(ctx.stream());
    else
      w->forward(ctx);
  };
  // Pitfall state, made before the loop so that only the mistake itself lands inside it.
  std::vector<float> pageable(256, 1.f);
  DeviceBuffer pageable_dst(pageable.size() * sizeof(float));
  // `.item()` / Python's max() on a CUDA tensor: PyTorch copies the value into pinned host
  // memory on the tensor's stream (the compute stream) and waits for that stream, so the host
  // stops until everything queued before it has run and the GPU restarts from an empty queue.
  // (A plain cudaMemcpy would go to the legacy stream, which does not wait for a non-blocking
  // compute stream: the value read would be stale and nothing would stall.)
  std::unique_ptr<void, decltype(&cudaFreeHost)> readback(nullptr, &cudaFreeHost);
  if (o.pitfall == Pitfall::Sync) {
    void* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, 16));
    readback.reset(host);
    const void* probe = w->output();
    cudaStream_t stream = ctx.stream();
    // After every layer. Errors surface at the next check (the hook runs in a destructor).
    ctx.set_layer_end_hook([probe, host, stream] {
      (void)cudaMemcpyAsync(host, probe, sizeof(uint16_t), cudaMemcpyDeviceToHost, stream);
      (void)cudaStreamSynchronize(stream);
    });
  }
  auto pitfall = [&] {
    switch (o.pitfall) {
      case Pitfall::None:
      case Pitfall::Sync:  // per layer, through the context's layer-end hook
        break;
      case Pitfall::Pageable:  // torch.tensor(list).cuda(): a host-to-device copy from pageable memory
        CUDA_CHECK(cudaMemcpyAsync(pageable_dst.data(), pageable.data(), pageable.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, ctx.stream()));
        break;
      case Pitfall::Alloc: {
        DeviceBuffer scratch(64u << 20);
        CUDA_CHECK(cudaMemsetAsync(scratch.data(), 0, 4096, ctx.stream()));
        break;
      }
    }
  };
  int done = 0;  // iterations enqueued before a Ctrl-C (all of them without one)
  for (int i = 0; i < total && !interrupt.requested(); ++i, ++done) {
    const bool warm = i < o.warmup;
    NvtxRange range(ctx, NvtxLevel::Iter, forward_name, static_cast<uint64_t>(i),
                    warm ? NvtxCategory::Warmup : NvtxCategory::Steady);
    CUDA_CHECK(cudaEventRecord(events[2 * i], ctx.stream()));
    pitfall();
    run_once();
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1], ctx.stream()));
  }
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));  // after the loop: nothing inside it waits
  const bool interrupted = done < total;

  // Enqueue cost on an idle GPU (see the top of this file), in its own NVTX range.
  constexpr int kEnqueueProbes = 5;
  std::vector<double> enqueue_ms;
  {
    static const NvtxName probe_name("enqueue_probe");
    NvtxRange range(ctx, NvtxLevel::Iter, probe_name);
    for (int i = 0; i < kEnqueueProbes && !interrupted; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      run_once();
      enqueue_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    }
  }
  if (tracer) {
    CUDA_CHECK(cudaDeviceSynchronize());  // every record complete before the final flush
    try {
      tracer->stop();
      trace::save_nsys_sqlite(tracer->take(), trace_out->temp_path());  // renamed onto o.trace when complete
      trace_out->commit();
    } catch (const trace::TraceError& e) {
      throw Error(e.what());
    }
    std::printf("  trace       %s (CUPTI; read it with `laptime analyze %s`)\n", o.trace.c_str(), o.trace.c_str());
  }
  // Every layer's FLOPs and bytes, beside the report and the trace, for analyze's roofline.
  std::set<std::string> sidecars;
  for (const std::string& p : {o.json, o.trace})
    if (!p.empty() && p != "-") sidecars.insert(trace::layer_costs_path(p));  // "-": no file to sit beside
  for (const std::string& p : sidecars) {
    write_layer_costs(p, layer_costs_json(o.workload.model, o.workload.precision, w->shape(), w->layer_costs()));
    std::printf("  layers      %s (FLOPs and bytes per NVTX range, for `laptime analyze`)\n", p.c_str());
  }

  std::vector<double> laps;
  nlohmann::json iterations = nlohmann::json::array();
  std::printf("\n  iteration   lap (ms)\n");
  for (int i = 0; i < done; ++i) {
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    const bool warm = i < o.warmup;
    std::printf("  %5d %-6s %9.3f\n", i, warm ? "warmup" : "", ms);
    iterations.push_back({{"index", i}, {"warmup", warm}, {"lap_ms", ms}});
    if (!warm) laps.push_back(ms);
  }
  if (laps.empty()) {  // interrupted during warm-up: nothing steady to report
    std::printf("\n%s\n", steady_summary(laps, o.iters, true, done).c_str());
    if (json_out) {
      report["iterations"] = iterations;
      report["interrupted"] = true;
      json_out->write(report.dump(2) + "\n");
      json_out->commit();
    }
    return kInterruptedExitCode;
  }
  const Stats s = stats_of(laps);
  const double enqueue = enqueue_ms.empty() ? NAN : percentile(enqueue_ms, 0.5);
  const double flops = w->flops_per_forward();
  const double tflops = flops / (s.median * 1e-3) / 1e12;
  const double items_per_s = w->items_per_forward() / (s.median * 1e-3);
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));

  std::printf("\n%s\n", steady_summary(laps, o.iters, interrupted, done).c_str());
  std::printf("  throughput  %.0f %s/s\n", items_per_s, w->item_name());
  std::printf("  compute     %.1f GFLOP per forward, %.1f TFLOP/s achieved\n", flops / 1e9, tflops);
  if (!enqueue_ms.empty())
    std::printf("  host        %.3f ms to enqueue one forward on an idle GPU (%.0f%% of the lap%s)\n", enqueue,
                100 * enqueue / s.median, enqueue > 0.8 * s.median ? ": launch-bound" : ", GPU-bound");
  std::printf("  memory      weights %.1f MiB, activations %.1f MiB, workspace %.1f MiB, device in use %.1f MiB\n",
              w->weight_bytes() / 1048576.0, w->activation_bytes() / 1048576.0, ctx.workspace_bytes() / 1048576.0,
              (total_b - free_b) / 1048576.0);
  std::printf("\nlap time: %.3f ms (median of %zu, %s, %s)\n", s.median, laps.size(), precision_name(o.workload.precision),
              o.graph == GraphMode::Graph ? "graph" : "eager");

  if (json_out) {
    report["iterations"] = iterations;
    if (interrupted) report["interrupted"] = true;
    report["steady_ms"] = {{"mean", s.mean}, {"median", s.median}, {"p10", s.p10}, {"p90", s.p90},
                           {"min", s.min},   {"max", s.max},       {"stddev", s.stddev}};
    report["throughput"] = {{"items_per_s", items_per_s}, {"item", w->item_name()}};
    report["flops_per_forward"] = flops;
    report["tflops"] = tflops;
    report["enqueue_ms"] = enqueue_ms.empty() ? nlohmann::json(nullptr) : nlohmann::json(enqueue);
    report["memory_bytes"] = {{"weights", w->weight_bytes()},
                              {"activations", w->activation_bytes()},
                              {"workspace", ctx.workspace_bytes()},
                              {"device_in_use", total_b - free_b}};
    json_out->write(report.dump(2) + "\n");
    json_out->commit();
  }
  return interrupted ? kInterruptedExitCode : 0;
}

std::unique_ptr<Workload> make_workload(Context& ctx, const WorkloadOptions& opts) {
  if (opts.model == "gpt2") return make_gpt2_workload(ctx, opts);
  if (opts.model == "resnet50") return make_resnet50_workload(ctx, opts);
  throw Error("unknown model '" + opts.model + "': choose gpt2 or resnet50.");
}

}  // namespace laptime
