// The SM clock while `laptime bench` loops, read from NVML on a thread of its own.
//
// A long run at full load reaches the board's power limit: the driver then lowers the SM clock
// (NVML's "SW power cap" reason) and every lap after that point is a few percent slower, with
// nothing in the loop changed (results/2026-12-02e-layernorm: ResNet-50 B256 bf16 5.08 ms laps
// at 1980 MHz, then 5.25 at 1725-1845). The sampler reads the clock and the reasons every
// millisecond from the loop's first launch to its end, so the report can say which laps ran
// capped (bench_result.h's BenchClocks). The same polls read NVML's total-energy counter, where
// the GPU has one, and keep each step it takes, for the energy per forward (bench/energy.h).
//
// NVML (libnvidia-ml.so.1, part of the driver) is loaded at run time, not linked: a machine
// without it still runs the bench, and the report says why there is no clock. The few entry
// points the sampler calls are a table (NvmlApi), which tests fill with a fake NVML.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_result.h"
#include "bench/energy.h"

namespace laptime {

// The NVML entry points the sampler calls, with NVML's own C signatures (nvml.h; its ABI is
// stable across drivers). Each returns an nvmlReturn_t, 0 for NVML_SUCCESS. power_limit and
// energy may be null (an NVML without them); the others may not.
struct NvmlApi {
  using Device = void*;
  int (*init)() = nullptr;                                // nvmlInit_v2
  int (*shutdown)() = nullptr;                            // nvmlShutdown
  int (*by_pci)(const char*, Device*) = nullptr;          // nvmlDeviceGetHandleByPciBusId_v2
  int (*clock)(Device, int, unsigned*) = nullptr;         // nvmlDeviceGetClockInfo
  int (*reasons)(Device, unsigned long long*) = nullptr;  // ...GetCurrentClocksEventReasons
  int (*power_limit)(Device, unsigned*) = nullptr;        // nvmlDeviceGetEnforcedPowerLimit, mW
  int (*energy)(Device, unsigned long long*) = nullptr;   // nvmlDeviceGetTotalEnergyConsumption, mJ
};

class ClockSampler {
 public:
  // `cuda_device`: the CUDA device index, matched to NVML's by PCI bus id.
  explicit ClockSampler(int cuda_device);
  // Over a table already filled (a fake NVML in tests) for the GPU at `pci_bus` ("0000:17:00.0").
  ClockSampler(const NvmlApi& api, const std::string& pci_bus);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  // "" when the clock can be read; else why not ("libnvidia-ml.so.1 could not be loaded").
  const std::string& unavailable() const { return why_; }
  int power_limit_w() const { return power_limit_w_; }  // the enforced limit; 0 if unknown
  // "" when the energy counter can be read too; else why not (no clock, a GPU older than Volta).
  const std::string& energy_unavailable() const { return energy_why_; }

  // Starts sampling; sample times are milliseconds after this call.
  void start();
  // Stops the thread and returns what it read (empty if unavailable or never started).
  std::vector<ClockSample> stop();
  // After stop(): the energy counter's steps over the loop (empty if it was not read).
  std::vector<EnergyReading> take_energy() { return std::move(energy_); }

 private:
  struct Nvml;
  void open(const std::string& pci_bus);
  void run();

  std::unique_ptr<Nvml> nvml_;
  std::string why_, energy_why_;
  int power_limit_w_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<ClockSample> samples_;
  std::vector<EnergyReading> energy_;
};

}  // namespace laptime
