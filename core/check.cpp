#include "core/check.h"

#include <cstring>
#include <sstream>

namespace laptime {

void fail_library_call(const char* library, const char* expr, const char* message, const char* func, const char* file,
                       int line) {
  // Keep only the path below the repository root so messages stay short.
  const char* short_file = file;
  for (const char* root : {"/core/", "/kernels/", "/layers/", "/models/", "/weights/", "/bench/", "/tests/"}) {
    if (const char* p = std::strstr(file, root)) {
      short_file = p + 1;
      break;
    }
  }
  std::ostringstream os;
  os << library << " call `" << expr << "` failed at " << short_file << ":" << line << " (" << func << "): " << message;
  throw Error(os.str());
}

std::string describe_cuda_error(cudaError_t err) {
  std::string msg = cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) msg = "out of device memory (" + msg + ")";
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) msg = "no usable CUDA GPU (" + msg + ")";
  return msg;
}

}  // namespace laptime
