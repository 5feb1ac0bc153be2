#include "bench/clocks.h"

#include <dlfcn.h>

#include <cuda_runtime.h>

#include "core/check.h"
#include "core/env_switches.h"

namespace laptime {

namespace {
constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr int kNvmlNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED
}  // namespace

// The table, the library it came from (none for a table filled by hand) and the device.
struct ClockSampler::Nvml {
  NvmlApi api;
  void* lib = nullptr;
  NvmlApi::Device device = nullptr;
  bool initialised = false;

  ~Nvml() {
    if (initialised && api.shutdown) api.shutdown();
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
    energy_why_ = "LAPTIME_BENCH_CLOCK=off (the clock sampler reads it)";
    return;
  }
  Nvml& n = *nvml_;
  n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    why_ = energy_why_ = "libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded";
    return;
  }
  // The reasons call was renamed in driver 535 (ClocksThrottleReasons -> ClocksEventReasons);
  // either one reads the same bit mask.
  NvmlApi& a = n.api;
  if (!n.find(a.init, "nvmlInit_v2") || !n.find(a.shutdown, "nvmlShutdown") ||
      !n.find(a.by_pci, "nvmlDeviceGetHandleByPciBusId_v2") || !n.find(a.clock, "nvmlDeviceGetClockInfo") ||
      !(n.find(a.reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
        n.find(a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"))) {
    why_ = energy_why_ = "this NVML lacks the clock calls the bench reads";
    return;
  }
  n.find(a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");  // optional: only the report's wording
  n.find(a.energy, "nvmlDeviceGetTotalEnergyConsumption");   // optional: Volta and newer
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device));
  open(bus);
}

ClockSampler::ClockSampler(const NvmlApi& api, const std::string& pci_bus) : nvml_(std::make_unique<Nvml>()) {
  nvml_->api = api;
  open(pci_bus);
}

// Initialises NVML, finds the GPU and reads each value once: what cannot be read now is said
// now, in why_ and energy_why_, and never polled.
void ClockSampler::open(const std::string& pci_bus) {
  Nvml& n = *nvml_;
  const NvmlApi& a = n.api;
  if (a.init() != 0) {
    why_ = energy_why_ = "NVML did not initialise";
    return;
  }
  n.initialised = true;
  unsigned mhz = 0;
  if (a.by_pci(pci_bus.c_str(), &n.device) != 0 || a.clock(n.device, kClockSm, &mhz) != 0) {
    why_ = "NVML cannot read the SM clock of the GPU at " + pci_bus;
    energy_why_ = why_ + ", which the energy is read with";
    return;
  }
  unsigned mw = 0;
  if (a.power_limit && a.power_limit(n.device, &mw) == 0) power_limit_w_ = static_cast<int>(mw / 1000);
  unsigned long long mj = 0;
  const int rc = a.energy ? a.energy(n.device, &mj) : 0;
  if (!a.energy)
    energy_why_ = "this NVML has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption)";
  else if (rc == kNvmlNotSupported)
    energy_why_ = "the GPU at " + pci_bus + " has no total-energy counter (NVML has one for Volta and newer)";
  else if (rc != 0)
    energy_why_ = "NVML cannot read the total-energy counter of the GPU at " + pci_bus + " (NVML error " +
                  std::to_string(rc) + ")";
  else
    energy_why_.clear();
}

ClockSampler::~ClockSampler() { stop(); }

void ClockSampler::start() {
  if (!why_.empty() || thread_.joinable()) return;
  samples_.clear();
  samples_.reserve(1 << 16);
  energy_.clear();
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
  const NvmlApi& a = n.api;
  const bool energy = energy_why_.empty();
  bool seen = false;  // a first energy reading to compare the next ones with
  unsigned long long last_mj = 0;
  double last_ms = 0;
  while (!stop_) {
    unsigned mhz = 0;
    unsigned long long reasons = 0, mj = 0;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    if (a.clock(n.device, kClockSm, &mhz) == 0 && a.reasons(n.device, &reasons) == 0)
      samples_.push_back({ms, static_cast<int>(mhz), static_cast<uint64_t>(reasons)});
    // The counter's steps only: each with the poll before it, between which it stepped.
    if (energy && a.energy(n.device, &mj) == 0) {
      if (seen && mj != last_mj) energy_.push_back({last_ms, ms, static_cast<uint64_t>(mj)});
      seen = true;
      last_mj = mj;
      last_ms = ms;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace laptime
