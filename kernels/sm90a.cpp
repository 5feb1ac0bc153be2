#include "kernels/sm90a.h"

#include <cuda_runtime.h>

#include "core/check.h"

namespace laptime {

std::string sm90a_refusal(const std::string& what, int device) {
#ifndef LAPTIME_HAVE_SM90A
  (void)device;
  return what + " is compiled only in a build for sm_90 (CMAKE_CUDA_ARCHITECTURES with 90), not this one.";
#else
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0)
    return what + " runs on sm_90 only (its code is sm_90a), not on this sm_" + std::to_string(major) +
           std::to_string(minor) + " device.";
  return "";
#endif
}

}  // namespace laptime
