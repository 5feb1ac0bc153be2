#include "bench/clocks.h"

#include <dlfcn.h>

#include <cuda_runtime.h>

#include "core/check.h"
#include "core/env_switches.h"

namespace laptime {

// The few NVML entry points the sampler calls, with NVML's own C signatures (nvml.h; its ABI is
// stable across drivers). Loaded with dlopen, so that no NVML header or library is needed to build.
struct ClockSampler::Nvml {
  using Device = void*;
  using Ret = int;                    // nvmlReturn_t; 0 is NVML_SUCCESS
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM

  void* lib = nullptr;
  Ret (*init)() = nullptr;
  Ret (*shutdown)() = nullptr;
  Ret (*by_pci)(const char*, Device*) = nullptr;
  Ret (*clock)(Device, int, unsigned*) = nullptr;
  Ret (*reasons)(Device, unsigned long long*) = nullptr;
  Ret (*power_limit)(Device, unsigned*) = nullptr;
  Device device = nullptr;
  bool initialised = false;

  ~Nvml() {
    if (initialised) shutdown();
    if (lib) dlclose(lib);
  }

  template <class F>
  bool find(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
};

ClockSampler::ClockSampler(int cuda_device) : nvml_(std::make_unique<Nvml>()) {
  if (!env::bench_clock()) {
    why_ = "LAPTIME_BENCH_CLOCK=off";
    return;
  }
  Nvml& n = *nvml_;
  n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    why_ = "libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded";
    return;
  }
  // The reasons call was renamed in driver 535 (ClocksThrottleReasons -> ClocksEventReasons);
  // either one reads the same bit mask.
  if (!n.find(n.init, "nvmlInit_v2") || !n.find(n.shutdown, "nvmlShutdown") ||
      !n.find(n.by_pci, "nvmlDeviceGetHandleByPciBusId_v2") || !n.find(n.clock, "nvmlDeviceGetClockInfo") ||
      !(n.find(n.reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
        n.find(n.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"))) {
    why_ = "this NVML lacks the clock calls the bench reads";
    return;
  }
  n.find(n.power_limit, "nvmlDeviceGetEnforcedPowerLimit");  // optional: only the report's wording
  if (n.init() != 0) {
    why_ = "NVML did not initialise";
    return;
  }
  n.initialised = true;
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device));
  unsigned mhz = 0;
  if (n.by_pci(bus, &n.device) != 0 || n.clock(n.device, Nvml::kClockSm, &mhz) != 0) {
    why_ = std::string("NVML cannot read the SM clock of the GPU at ") + bus;
    return;
  }
  unsigned mw = 0;
  if (n.power_limit && n.power_limit(n.device, &mw) == 0) power_limit_w_ = static_cast<int>(mw / 1000);
}

ClockSampler::~ClockSampler() { stop(); }

void ClockSampler::start() {
  if (!why_.empty() || thread_.joinable()) return;
  samples_.clear();
  samples_.reserve(1 << 16);
  stop_ = false;
  t0_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { run(); });
}

std::vector<ClockSample> ClockSampler::stop() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  return std::move(samples_);
}

void ClockSampler::run() {
  const Nvml& n = *nvml_;
  while (!stop_) {
    unsigned mhz = 0;
    unsigned long long reasons = 0;
    const auto t = std::chrono::steady_clock::now();
    if (n.clock(n.device, Nvml::kClockSm, &mhz) == 0 && n.reasons(n.device, &reasons) == 0)
      samples_.push_back({std::chrono::duration<double, std::milli>(t - t0_).count(), static_cast<int>(mhz),
                          static_cast<uint64_t>(reasons)});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace laptime
