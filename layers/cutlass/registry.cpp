// The CUTLASS kernels this build holds (layers/cutlass/cutlass_gemm.h), host C++. The list comes
// from layers/cutlass/cutlass.cmake, the one place that names them: CMake writes
// cutlass_kernel_list.h with one LAPTIME_CUTLASS_KERNEL(name) per GEMM it compiles
// (LAPTIME_CUTLASS_CONV_KERNEL(name) for the convolutions), and nothing where it compiles none (no
// sm_90 in CMAKE_CUDA_ARCHITECTURES, or no CUTLASS headers).
#include <string>

#include "core/check.h"
#include "core/env_switches.h"
#include "layers/cutlass/cutlass_conv.h"
#include "layers/cutlass/cutlass_gemm.h"

namespace laptime {

namespace sm90 {
#define LAPTIME_CUTLASS_KERNEL(name) const CutlassGemmKernel& name();
#define LAPTIME_CUTLASS_CONV_KERNEL(name) const CutlassConvKernel& name();
#include "cutlass_kernel_list.h"
#undef LAPTIME_CUTLASS_KERNEL
#undef LAPTIME_CUTLASS_CONV_KERNEL
}  // namespace sm90

std::vector<const CutlassGemmKernel*> cutlass_built_kernels() {
  return {
#define LAPTIME_CUTLASS_KERNEL(name) &sm90::name(),
#define LAPTIME_CUTLASS_CONV_KERNEL(name)
#include "cutlass_kernel_list.h"
#undef LAPTIME_CUTLASS_KERNEL
#undef LAPTIME_CUTLASS_CONV_KERNEL
  };
}

std::vector<const CutlassConvKernel*> cutlass_built_conv_kernels() {
  return {
#define LAPTIME_CUTLASS_KERNEL(name)
#define LAPTIME_CUTLASS_CONV_KERNEL(name) &sm90::name(),
#include "cutlass_kernel_list.h"
#undef LAPTIME_CUTLASS_KERNEL
#undef LAPTIME_CUTLASS_CONV_KERNEL
  };
}

bool cutlass_in_build() { return !cutlass_built_kernels().empty(); }

std::vector<const CutlassGemmKernel*> cutlass_gemm_kernels(int device) {
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0 || !env::cutlass()) return {};  // sm_90a code runs on 9.0 alone
  return cutlass_built_kernels();
}

std::vector<const CutlassConvKernel*> cutlass_conv_kernels(int device) {
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0 || !env::cutlass()) return {};
  return cutlass_built_conv_kernels();
}

std::vector<CutlassSchedule> cutlass_schedules() {
  return {{CutlassRaster::Heuristic, 1},
          {CutlassRaster::AlongM, 1},
          {CutlassRaster::AlongN, 1},
          {CutlassRaster::AlongM, 8},
          {CutlassRaster::AlongN, 8}};
}

std::string schedule_name(const CutlassSchedule& s) {
  const char* r = s.raster == CutlassRaster::AlongM   ? "along M"
                  : s.raster == CutlassRaster::AlongN ? "along N"
                                                      : "raster heuristic";
  return std::string(r) + ", swizzle " + std::to_string(s.swizzle);
}

}  // namespace laptime
