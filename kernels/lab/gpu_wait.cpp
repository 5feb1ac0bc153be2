#include "kernels/lab/gpu_wait.h"

namespace laptime::lab {
namespace {

// Process-wide by nature: a hang is the process's, whoever waits.
WaitWatch* g_watch = nullptr;

template <class F>
cudaError_t watched(F wait) {
  if (g_watch) g_watch->begin();
  const cudaError_t e = wait();
  if (g_watch) g_watch->end();
  return e;
}

}  // namespace

void set_wait_watch(WaitWatch* watch) { g_watch = watch; }

void watch_phase(const std::string& what) {
  if (g_watch) g_watch->phase(what);
}

cudaError_t wait_stream(cudaStream_t stream) {
  return watched([&] { return cudaStreamSynchronize(stream); });
}
cudaError_t wait_event(cudaEvent_t event) {
  return watched([&] { return cudaEventSynchronize(event); });
}
cudaError_t wait_device() {
  return watched([] { return cudaDeviceSynchronize(); });
}

}  // namespace laptime::lab
