#include "core/context.h"

#include <string>

namespace laptime {

bool gpu_available(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    if (why) *why = err != cudaSuccess ? describe_cuda_error(err) : std::string("no CUDA device found");
    cudaGetLastError();  // clear the sticky-free error so later calls are not confused
    return false;
  }
  return true;
}

Context::Context(int device, StreamKind stream, NvtxLevel nvtx) : device_(device), nvtx_(nvtx) {
  std::string why;
  if (!gpu_available(&why)) throw Error(why + ".");
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  require(device >= 0 && device < count, "device " + std::to_string(device) + " does not exist (this machine has " +
                                             std::to_string(count) + " CUDA device(s)).");
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
  if (stream == StreamKind::Created) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    owns_stream_ = true;
  }
  CUBLAS_CHECK(cublasLtCreate(&cublaslt_));
  reserve_workspace(kCublasLtWorkspace);
}

Context::~Context() {
  // Destructors must not throw: release in reverse order, ignoring status.
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublaslt_) cublasLtDestroy(cublaslt_);
  workspace_ = DeviceBuffer();
  if (owns_stream_) cudaStreamDestroy(stream_);
}

cudnnHandle_t Context::cudnn() {
  if (!cudnn_) {
    CUDNN_CHECK(cudnnCreate(&cudnn_));
    CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
  }
  return cudnn_;
}

void Context::reserve_workspace(std::size_t bytes) {
  if (bytes <= workspace_.bytes()) return;
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // build time only: the old buffer may be in use
  workspace_ = DeviceBuffer(bytes);
}

}  // namespace laptime
