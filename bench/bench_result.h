// What one `laptime bench` run found, apart from how it is shown: run_bench (bench.cpp) fills
// a BenchResult, and the text report and the JSON report (schema laptime.bench/1, docs/PERF.md)
// only read it. Host-only, so both presentations are tested without a GPU (tests/test_cli.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/energy.h"
#include "core/stats.h"

namespace laptime {

// The GPU and the libraries, as the run found them.
struct BenchDevice {
  std::string name;
  int sm_count = 0;
  int sm_clock_mhz = 0, memory_clock_mhz = 0;
  double memory_gib = 0;
  // "major.minor": the driver's and the runtime's CUDA versions; cuBLAS and cuDNN as built
  // against and as loaded.
  std::string driver, cuda_runtime, cublas_compiled, cublas_loaded, cudnn_compiled, cudnn_loaded;
};

// What was run, each choice spelt as on the command line.
struct BenchConfig {
  std::string model, pitfall, precision;
  std::string shape;    // the workload's one line ("B=8 T=1024 (8192 tokens)")
  std::string weights;  // file, or a description of the random weights
  int64_t params = 0;
  bool graph = false;  // one forward captured in a CUDA Graph and replayed (else eager)
  std::string nvtx, stream;
  int warmup = 0, iters = 0;
  std::string variant;             // which implementation variants ran; "" when the model has none
  std::vector<std::string> plans;  // how the model was planned (ResNet-50's convolutions); may be empty
  // Every LAPTIME_* switch the environment set (core/env_switches.h), name and value, in the
  // switches' order: two reports of one command under different switches say how they differ.
  std::vector<std::pair<std::string, std::string>> switches;
  // --kernel NAME=FILE.cu: each learner's file the model ran (kernels/lab/user_kernel.h), as given,
  // with the SHA-256 of its bytes.
  struct KernelFile {
    std::string kernel, path, sha256;
  };
  std::vector<KernelFile> kernel_files;
};

struct BenchLap {
  int index = 0;
  bool warmup = false;
  float ms = 0.f;  // between the iteration's two events
  // The SM clock while the lap ran (bench/clocks.h; assign_clocks below): none when the clock
  // was not read. `throttled`: NVML gave a reason that holds the clock down (power cap, thermal,
  // hardware slowdown) at some sample inside the lap.
  std::optional<int> sm_mhz;
  bool throttled = false;
  bool at_power_cap = false;  // among those reasons, the SW power cap (the board's power limit)
};

// One reading of the SM clock, t_ms after the loop's start (bench/clocks.h), and NVML's
// clock-event reasons at that moment (its bit mask, nvml.h's nvmlClocksEventReason*).
struct ClockSample {
  double t_ms = 0;
  int sm_mhz = 0;
  uint64_t reasons = 0;
};
// The reasons that hold the clock below what the load asks for (idle and application-clock
// settings are not among them).
constexpr uint64_t kClockSwPowerCap = 0x4, kClockHwSlowdown = 0x8, kClockSwThermal = 0x20, kClockHwThermal = 0x40,
                   kClockHwPowerBrake = 0x80;
constexpr uint64_t kClockThrottles =
    kClockSwPowerCap | kClockHwSlowdown | kClockSwThermal | kClockHwThermal | kClockHwPowerBrake;
// "the power cap", "a thermal slowdown", ... for the reasons in `mask` (the throttling ones); "" for none.
std::string throttle_words(uint64_t mask);

// How the clock was read over the loop.
struct BenchClocks {
  std::string unavailable;  // why no clock was read; "" when it was
  std::size_t samples = 0;  // readings over the loop, one about every millisecond
  int power_limit_w = 0;    // the board's enforced limit; 0 if unknown
  uint64_t reasons = 0;     // the throttling reasons seen in any steady lap
};

struct BenchMemory {
  std::size_t weights = 0, activations = 0, workspace = 0;
  std::size_t device_in_use = 0;  // cudaMemGetInfo's total − free after the run
};

struct BenchResult {
  BenchDevice device;
  BenchConfig config;
  std::string trace;                  // the --trace file written, "" without one
  std::vector<std::string> sidecars;  // the layer-cost files written beside --json and --trace
  std::vector<BenchLap> laps;         // every iteration done, warm-up first
  bool interrupted = false;           // Ctrl-C ended the loop before all iterations
  double flops_per_forward = 0;       // analytic: the sum of the layers' FLOPs
  int64_t items_per_forward = 0;      // tokens or images
  std::string item_name;              // "tokens" | "images"
  std::optional<double> enqueue_ms;   // host time to enqueue one forward on an idle GPU (median)
  BenchMemory memory;
  std::optional<BenchClocks> clocks;  // none when the run did not try (a result made by hand)
  std::optional<BenchEnergy> energy;  // likewise (bench/energy.h)

  // Filled by summarize(): the statistics of the steady laps, none when there is no steady
  // lap (interrupted during warm-up), and what follows from their median.
  std::optional<stats::Summary> steady;
  double items_per_s = 0, tflops = 0;

  std::vector<double> steady_laps() const;
};

// Fills r.steady, r.items_per_s and r.tflops from r.laps and the per-forward counts.
void summarize(BenchResult& r);

// Gives each lap of r.laps its clock: spans[i] is lap i's [start, end] in milliseconds on the
// GPU's timeline from the loop's first event, which the samples' times share (the GPU is idle
// when the loop starts, so its first event runs as it is enqueued). A lap's clock is the mean of
// the readings inside it, or the nearest reading for a lap shorter than the sampling; it is throttled
// if any reading inside it (or that nearest one) has a throttling reason, and at the power cap if
// any has the SW power cap among them. Fills r.clocks (samples, reasons).
void assign_clocks(BenchResult& r, const std::vector<std::pair<double, double>>& spans,
                   const std::vector<ClockSample>& samples, int power_limit_w);

// Fills r.energy from the energy counter's steps over the loop (bench/energy.h), for the steady
// laps of r.laps with `spans` as in assign_clocks; call it after assign_clocks (the laps at the
// cap) and with the per-forward counts set. `unavailable`: why the counter was not read, "" when
// it was.
void assign_energy(BenchResult& r, const std::vector<std::pair<double, double>>& spans,
                   const std::vector<EnergyReading>& readings, const std::string& unavailable, int power_limit_w);

// The report's header (device, software, run, weights, variant, plans): printed before the
// loop, so that a long run shows what it is running.
void print_bench_header(const BenchResult& r, std::FILE* out = stdout);
// The rest of the text report: the files written, the laps, the statistics and what follows
// from them, the lap time.
void print_bench(const BenchResult& r, std::FILE* out = stdout);

// The JSON report (schema laptime.bench/1). With no steady lap it holds the configuration,
// the laps done and `interrupted`, and no statistics.
nlohmann::json bench_to_json(const BenchResult& r);

}  // namespace laptime
