// `laptime peak`: the device's ceilings for the per-layer roofline, measured once and cached.
//
// Compute: a square cuBLASLt GEMM (8192³, the model's own Gemm wrapper) per precision: bf16
// (fp32 accumulation), tf32, strict fp32 and, on sm_89+, fp8 (e4m3 in, bf16 out); bandwidth: a 1 GiB device-to-device copy,
// counting the bytes read and written. Each is the best of 10 timed runs after 3 warm-ups
// (CUDA events): a ceiling is what the device reaches at its best, not its typical run.
// The result goes to trace::default_peak_path(GPU name) unless --cache names a file; a
// cached file of the same GPU is printed as it is unless --force.
#pragma once

#include <string>

namespace laptime {

struct PeakOptions {
  int device = 0;
  std::string cache;   // empty: trace::default_peak_path(device name)
  bool force = false;  // measure even when the cache holds this GPU's ceilings
};

int run_peak(const PeakOptions& o);

}  // namespace laptime
