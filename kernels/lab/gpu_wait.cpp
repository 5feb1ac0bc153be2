#include "kernels/lab/gpu_wait.h"

namespace laptime::lab {
namespace {

// Process-wide by nature: a hang is the process's, whoever waits.
WaitWatch* g_watch = nullptr;

}  // namespace

cudaError_t announced_wait(const std::function<cudaError_t()>& wait) {
  if (g_watch) g_watch->begin();
  const cudaError_t e = wait();
  if (g_watch) g_watch->end();
  return e;
}

void set_wait_watch(WaitWatch* watch) { g_watch = watch; }

void watch_phase(const std::string& what) {
  if (g_watch) g_watch->phase(what);
}

cudaError_t wait_stream(cudaStream_t stream) {
  return announced_wait([&] { return cudaStreamSynchronize(stream); });
}
cudaError_t wait_event(cudaEvent_t event) {
  return announced_wait([&] { return cudaEventSynchronize(event); });
}
cudaError_t wait_device() {
  return announced_wait([] { return cudaDeviceSynchronize(); });
}

}  // namespace laptime::lab
