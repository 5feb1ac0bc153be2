// The SM clock while `laptime bench` loops, read from NVML on a thread of its own.
//
// A long run at full load reaches the board's power limit: the driver then lowers the SM clock
// (NVML's "SW power cap" reason) and every lap after that point is a few percent slower, with
// nothing in the loop changed (results/2026-12-02e-layernorm: ResNet-50 B256 bf16 5.08 ms laps
// at 1980 MHz, then 5.25 at 1725-1845). The sampler reads the clock and the reasons every
// millisecond from the loop's first launch to its end, so the report can say which laps ran
// capped (bench_result.h's BenchClocks).
//
// NVML (libnvidia-ml.so.1, part of the driver) is loaded at run time, not linked: a machine
// without it still runs the bench, and the report says why there is no clock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_result.h"

namespace laptime {

class ClockSampler {
 public:
  // `cuda_device`: the CUDA device index, matched to NVML's by PCI bus id.
  explicit ClockSampler(int cuda_device);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  // "" when the clock can be read; else why not ("libnvidia-ml.so.1 could not be loaded").
  const std::string& unavailable() const { return why_; }
  int power_limit_w() const { return power_limit_w_; }  // the enforced limit; 0 if unknown

  // Starts sampling; sample times are milliseconds after this call.
  void start();
  // Stops the thread and returns what it read (empty if unavailable or never started).
  std::vector<ClockSample> stop();

 private:
  struct Nvml;
  void run();

  std::unique_ptr<Nvml> nvml_;
  std::string why_;
  int power_limit_w_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<ClockSample> samples_;
};

}  // namespace laptime
