// `laptime bench`: loop forward passes and report the steady-state lap time.
//
// Each iteration is bracketed by two CUDA events on the context's stream; the lap time is
// their difference, so it measures the GPU timeline of one forward, launch gaps included.
// The host time spent enqueuing one forward is measured separately, after the loop, on an
// idle GPU: inside the loop a GPU-bound run fills the launch queue and every launch then
// waits for a free slot, so in-loop enqueue times just mirror the lap time. When the idle
// enqueue time approaches the lap time, the run is launch-bound. Warm-up iterations (module
// load, cuBLASLt/cuDNN first-call costs, clocks ramping) are marked in NVTX and kept out of
// the statistics.
//
// run_bench reads as the run goes: outputs checked, the workload built, the header printed,
// the loop, the enqueue probe, the trace and the layer-cost sidecars written; it fills a
// BenchResult (bench/bench_result.h) whose text and JSON are only presentations of it.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>

#include <cudnn.h>
#include <nlohmann/json.hpp>
#include <nvtx3/nvToolsExtCudaRt.h>

#include "bench/bench_result.h"
#include "bench/bench.h"
#include "bench/clocks.h"
#include "bench/interrupt.h"
#include "bench/layer_costs.h"
#include "core/buffer.h"
#include "core/check.h"
#include "core/context.h"
#include "core/env_switches.h"
#include "core/output_file.h"
#include "core/stats.h"
#include "core/timing.h"
#include "trace/capture/cupti_tracer.h"
#include "trace/capture/nsys_writer.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sidecars.h"

namespace laptime {
namespace {

std::string version_str(int v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string(v % major_div / minor_div);
}

// --json, --trace and --output, checked and opened before any GPU work: a bad --json folder, an
// output onto --weights, or a device as output is refused now, not after the whole benchmark
// (core/output_file.h).
struct BenchOutputs {
  std::unique_ptr<OutputFile> json, trace, logits;
};

BenchOutputs open_outputs(const BenchOptions& o) {
  std::vector<std::string> inputs{o.workload.weights};
  for (const auto& [name, path] : o.workload.kernel_files) inputs.push_back(path);  // --kernel NAME=FILE.cu
  check_outputs({{"JSON report", o.json, true}, {"trace", o.trace}, {"logits", o.output}}, inputs);
  BenchOutputs out;
  if (!o.json.empty()) out.json = std::make_unique<OutputFile>(OutputSpec{"JSON report", o.json, true}, inputs);
  if (!o.trace.empty()) out.trace = std::make_unique<OutputFile>(OutputSpec{"trace", o.trace}, inputs);
  if (!o.output.empty()) out.logits = std::make_unique<OutputFile>(OutputSpec{"logits", o.output}, inputs);
  return out;
}

// --output: the logits the last lap left, read back once the loop is over (the enqueue probe
// after it runs the same forward on the same inputs).
void write_logits(const Workload& w, const Context& ctx, OutputFile& out) {
  const std::vector<float> logits = w.output_to_host(ctx);
  out.write(std::string_view(reinterpret_cast<const char*>(logits.data()), logits.size() * sizeof(float)));
  out.commit();
}

// --trace: CUPTI subscribes before the first CUDA call and becomes the NVTX injection before
// the first NVTX call (NVTX looks its injection up once). Null without --trace.
std::unique_ptr<trace::CuptiTracer> start_tracer(const BenchOptions& o) {
  if (o.trace.empty()) return nullptr;
  try {
    return std::make_unique<trace::CuptiTracer>();
  } catch (const trace::TraceError& e) {
    // Without a GPU, CUPTI's own first failure (cuptiSetThreadIdType ...) says nothing useful:
    // say what every other command says. Asked only now: CUDA must not start before CUPTI.
    if (std::string why; !gpu_available(&why)) throw Error(why + ".");
    throw Error(e.what());
  }
}

void name_thread_and_stream(const BenchOptions& o, const Context& ctx, trace::CuptiTracer* tracer) {
  if (o.nvtx == NvtxLevel::None) return;
  if (tracer && tracer->injects_nvtx()) {
    // Some CUPTI 13.0 builds crash in nvtxNameOsThreadA when CUPTI is the NVTX injection.
    tracer->name_current_thread("laptime main");
  } else {
    nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "laptime main");
    nvtxNameCudaStreamA(ctx.stream(), o.stream == StreamKind::Created ? "laptime stream" : "default stream");
  }
}

BenchDevice describe_device(const Context& ctx) {
  const cudaDeviceProp& p = ctx.props();
  int driver = 0, runtime = 0, sm_clock = 0, mem_clock = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, ctx.device()));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, ctx.device()));
  const int cublas_loaded = static_cast<int>(cublasLtGetVersion()), cudnn_loaded = static_cast<int>(cudnnGetVersion());
  BenchDevice d;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.sm_clock_mhz = sm_clock / 1000;
  d.memory_clock_mhz = mem_clock / 1000;
  d.memory_gib = p.totalGlobalMem / double(1u << 30);
  d.driver = version_str(driver, 1000, 10);
  d.cuda_runtime = version_str(runtime, 1000, 10);
  d.cublas_compiled = version_str(CUBLAS_VERSION, 10000, 100);
  d.cublas_loaded = version_str(cublas_loaded, 10000, 100);
  d.cudnn_compiled = version_str(CUDNN_VERSION, 10000, 100);
  d.cudnn_loaded = version_str(cudnn_loaded, 10000, 100);
  return d;
}

BenchConfig describe_config(const BenchOptions& o, const Workload& w) {
  BenchConfig c;
  c.model = o.workload.model;
  c.pitfall = pitfall_name(o.pitfall);
  c.precision = precision_name(o.workload.precision);
  c.shape = w.shape();
  c.weights = w.weights_source();
  c.params = w.param_count();
  c.graph = o.graph == GraphMode::Graph;
  c.nvtx = nvtx_level_name(o.nvtx);
  c.stream = stream_name(o.stream);
  c.warmup = o.warmup;
  c.iters = o.iters;
  c.variant = w.variant();
  c.plans = w.plan_report();
  for (const env::Switch& s : env::kAllSwitches)
    if (std::string v = env::text(s); !v.empty()) c.switches.emplace_back(s.name, std::move(v));
  for (const lab::UserVersionInfo& f : lab::user_version_infos())
    c.kernel_files.push_back({f.kernel, f.file, f.sha256});
  return c;
}

// One forward as the run does it: a replay of the captured graph, or the eager pass.
class Forward {
 public:
  // --graph: captures one forward now. A call that breaks capture (an allocation, a
  // synchronization, a pageable copy) fails inside forward() and is reported with its name
  // and location.
  Forward(Workload& w, const Context& ctx, GraphMode mode) : w_(w), ctx_(ctx) {
    if (mode != GraphMode::Graph) return;
    try {
      graph_.capture(ctx.stream(), [&] { w.forward(ctx); });
    } catch (const Error& e) {
      throw Error(std::string("CUDA Graph capture of forward() failed: ") + e.what());
    }
  }
  void operator()() const {
    if (graph_.captured())
      graph_.launch(ctx_.stream());
    else
      w_.forward(ctx_);
  }

 private:
  Workload& w_;
  const Context& ctx_;
  CudaGraph graph_;
};

// --pitfall's state, made before the loop so that only the mistake itself lands inside it;
// before_forward() is the mistake, inside each iteration's range.
class Pitfalls {
 public:
  Pitfalls(Pitfall kind, Context& ctx, const Workload& w)
      : kind_(kind), ctx_(ctx), pageable_(256, 1.f), pageable_dst_(pageable_.size() * sizeof(float)) {
    if (kind != Pitfall::Sync) return;
    // `.item()` / Python's max() on a CUDA tensor: PyTorch copies the value into pinned host
    // memory on the tensor's stream (the compute stream) and waits for that stream, so the host
    // stops until everything queued before it has run and the GPU restarts from an empty queue.
    // (A plain cudaMemcpy would go to the legacy stream, which does not wait for a non-blocking
    // compute stream: the value read would be stale and nothing would stall.)
    void* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, 16));
    readback_.reset(host);
    const void* probe = w.output();
    cudaStream_t stream = ctx.stream();
    // After every layer. Errors surface at the next check (the hook runs in a destructor).
    ctx.set_layer_end_hook([probe, host, stream] {
      (void)cudaMemcpyAsync(host, probe, sizeof(uint16_t), cudaMemcpyDeviceToHost, stream);
      (void)cudaStreamSynchronize(stream);
    });
  }
  // The hook goes before the pinned memory it writes into.
  ~Pitfalls() {
    if (kind_ == Pitfall::Sync) ctx_.set_layer_end_hook(nullptr);
  }
  Pitfalls(const Pitfalls&) = delete;
  Pitfalls& operator=(const Pitfalls&) = delete;

  void before_forward() {
    switch (kind_) {
      case Pitfall::None:
      case Pitfall::Sync:  // per layer, through the context's layer-end hook
        break;
      case Pitfall::Pageable:  // torch.tensor(list).cuda(): a host-to-device copy from pageable memory
        CUDA_CHECK(cudaMemcpyAsync(pageable_dst_.data(), pageable_.data(), pageable_.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, ctx_.stream()));
        break;
      case Pitfall::Alloc: {
        DeviceBuffer scratch(64u << 20);
        CUDA_CHECK(cudaMemsetAsync(scratch.data(), 0, 4096, ctx_.stream()));
        break;
      }
    }
  }

 private:
  Pitfall kind_;
  Context& ctx_;
  // The pageable copy's source and target, made for every run as they always were (a device
  // allocation moves the "device in use" figure, which reports compare).
  std::vector<float> pageable_;
  DeviceBuffer pageable_dst_;
  std::unique_ptr<void, decltype(&cudaFreeHost)> readback_{nullptr, &cudaFreeHost};
};

// The timing loop: warm-up then steady iterations, each in its NVTX range between two events
// (events[2i], events[2i + 1]) on the context's stream, until done or Ctrl-C. Returns the
// iterations enqueued; synchronizes once, after the loop: nothing inside it waits.
int run_loop(const BenchOptions& o, const Context& ctx, const Forward& forward, Pitfalls& pitfalls,
             const EventPool& events, const InterruptGuard& interrupt) {
  static const NvtxName forward_name("forward");
  const int total = o.warmup + o.iters;
  int done = 0;
  for (int i = 0; i < total && !interrupt.requested(); ++i, ++done) {
    const bool warm = i < o.warmup;
    NvtxRange range(ctx, NvtxLevel::Iter, forward_name, static_cast<uint64_t>(i),
                    warm ? NvtxCategory::Warmup : NvtxCategory::Steady);
    CUDA_CHECK(cudaEventRecord(events[2 * i], ctx.stream()));
    pitfalls.before_forward();
    forward();
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1], ctx.stream()));
  }
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return done;
}

// The host time to enqueue one forward on an idle GPU (see the top of this file): the median
// of a few, each followed by a synchronize, in its own NVTX range. None after a Ctrl-C.
std::optional<double> probe_enqueue(const Context& ctx, const Forward& forward, bool interrupted) {
  constexpr int kEnqueueProbes = 5;
  static const NvtxName probe_name("enqueue_probe");
  NvtxRange range(ctx, NvtxLevel::Iter, probe_name);
  std::vector<double> ms;
  for (int i = 0; i < kEnqueueProbes && !interrupted; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    forward();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  }
  if (ms.empty()) return std::nullopt;
  return stats::median(ms);
}

// Ends the CUPTI capture and writes it (laptime's nsys-schema SQLite) through `out`.
void save_trace(trace::CuptiTracer& tracer, OutputFile& out) {
  CUDA_CHECK(cudaDeviceSynchronize());  // every record complete before the final flush
  try {
    tracer.stop();
    trace::save_nsys_sqlite(tracer.take(), out.temp_path());  // renamed onto the path when complete
    out.commit();
  } catch (const trace::TraceError& e) {
    throw Error(e.what());
  }
}

// Every layer's FLOPs and bytes, beside the report and the trace, for analyze's roofline.
// Returns the files written, once each.
std::vector<std::string> write_sidecars(const BenchOptions& o, const Workload& w) {
  std::set<std::string> paths;
  for (const std::string& p : {o.json, o.trace})
    if (!p.empty() && p != "-") paths.insert(trace::layer_costs_path(p));  // "-": no file to sit beside
  if (paths.empty()) return {};
  const nlohmann::json sidecar = layer_costs_json(o.workload.model, o.workload.precision, w.shape(), w.layer_costs());
  for (const std::string& p : paths) write_layer_costs(p, sidecar);
  return {paths.begin(), paths.end()};
}

std::vector<BenchLap> read_laps(const EventPool& events, int done, int warmup) {
  std::vector<BenchLap> laps;
  for (int i = 0; i < done; ++i) {
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    BenchLap lap;
    lap.index = i;
    lap.warmup = i < warmup;
    lap.ms = ms;
    laps.push_back(lap);
  }
  return laps;
}

// Each lap's [start, end] on the GPU's timeline, in ms from the loop's first event.
std::vector<std::pair<double, double>> lap_spans(const EventPool& events, int done) {
  std::vector<std::pair<double, double>> spans;
  for (int i = 0; i < done; ++i) {
    float a = 0.f, b = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&a, events[0], events[2 * i]));
    CUDA_CHECK(cudaEventElapsedTime(&b, events[0], events[2 * i + 1]));
    spans.emplace_back(a, b);
  }
  return spans;
}

BenchMemory measure_memory(const Workload& w, const Context& ctx) {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return {w.weight_bytes(), w.activation_bytes(), ctx.workspace_bytes(), total_b - free_b};
}

}  // namespace

int run_bench(const BenchOptions& o) {
  BenchOutputs out = open_outputs(o);
  // Ctrl-C ends the loop early; the iterations done so far are reported (bench/interrupt.h).
  const InterruptGuard interrupt;
  std::unique_ptr<trace::CuptiTracer> tracer = start_tracer(o);
  Context ctx(o.device, o.stream, o.nvtx);
  name_thread_and_stream(o, ctx, tracer.get());
  WorkloadOptions wo = o.workload;
  wo.eager_loop = o.graph != GraphMode::Graph;  // fp8's choices then charge launches (layers/gemm_tuner.h)
  std::unique_ptr<Workload> w = make_workload(ctx, wo);

  BenchResult r;
  r.device = describe_device(ctx);
  r.config = describe_config(o, *w);
  print_bench_header(r);

  const Forward forward(*w, ctx, o.graph);
  const int total = o.warmup + o.iters;
  const EventPool events(2 * static_cast<size_t>(total));
  Pitfalls pitfalls(o.pitfall, ctx, *w);
  ClockSampler clock(ctx.device());
  // The GPU idle as the loop starts, so that its timeline and the clock samples share an origin.
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  clock.start();
  const int done = run_loop(o, ctx, forward, pitfalls, events, interrupt);
  const std::vector<ClockSample> clock_samples = clock.stop();
  r.interrupted = done < total;
  if (out.logits && done > 0) write_logits(*w, ctx, *out.logits);
  r.enqueue_ms = probe_enqueue(ctx, forward, r.interrupted);
  if (tracer) {
    save_trace(*tracer, *out.trace);
    r.trace = o.trace;
  }
  r.sidecars = write_sidecars(o, *w);

  r.laps = read_laps(events, done, o.warmup);
  const std::vector<std::pair<double, double>> spans = lap_spans(events, done);
  if (clock.unavailable().empty())
    assign_clocks(r, spans, clock_samples, clock.power_limit_w());
  else
    r.clocks = BenchClocks{clock.unavailable()};
  r.flops_per_forward = w->flops_per_forward();
  r.items_per_forward = w->items_per_forward();
  r.item_name = w->item_name();
  assign_energy(r, spans, clock.take_energy(), clock.energy_unavailable(), clock.power_limit_w());
  r.memory = measure_memory(*w, ctx);
  summarize(r);
  print_bench(r);
  if (out.json) {  // after the text: with --json -, the text went to standard error meanwhile
    out.json->write(bench_to_json(r).dump(2) + "\n");
    out.json->commit();
  }
  return r.interrupted ? kInterruptedExitCode : 0;
}

std::unique_ptr<Workload> make_workload(Context& ctx, const WorkloadOptions& opts) {
  if (opts.model == "gpt2") return make_gpt2_workload(ctx, opts);
  if (opts.model == "resnet50") return make_resnet50_workload(ctx, opts);
  throw Error("unknown model '" + opts.model + "': choose gpt2 or resnet50.");
}

}  // namespace laptime
