// Waits on the GPU, announced to a watch. A learner's kernel can hang; the lab stops it by the
// length of the wait that never ends: where `--try` runs in a child process, the watch tells the
// parent when each wait begins and ends (bench/lab/try_child.h), and the parent ends the child
// when one lasts past --timeout; where it runs in the lab's own process, or the bench checks a
// `--kernel NAME=FILE.cu`, a watchdog thread ends the process the same way. Every wait of the lab
// and of a loaded file's launch shape goes through here; without a watch they are plain waits.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

namespace laptime::lab {

class WaitWatch {
 public:
  virtual ~WaitWatch() = default;
  virtual void begin() = 0;                       // a wait on the GPU starts
  virtual void end() = 0;                         // and is over
  virtual void phase(const std::string& what) {}  // what runs from now on, for the message of a hang
};

// The process's watch (nullptr: none). Not owned; it must outlive its use.
void set_wait_watch(WaitWatch* watch);
// Tells the watch, if any, what runs from now on ("layernorm ln.cu: rows=37 C=771, zeros inputs").
void watch_phase(const std::string& what);

// Any blocking wait on the GPU, announced: `wait` runs between the watch's begin() and end().
cudaError_t announced_wait(const std::function<cudaError_t()>& wait);
// cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize, announced; their status.
cudaError_t wait_stream(cudaStream_t stream);
cudaError_t wait_event(cudaEvent_t event);
cudaError_t wait_device();

}  // namespace laptime::lab
