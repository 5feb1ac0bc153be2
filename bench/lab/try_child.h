// A piece of a lab run in a process of its own, so that what a learner's kernel does to its
// process cannot take the lab down: a fault leaves CUDA's context unusable for good (a sticky
// error), a hang never returns. The child announces each wait on the GPU and what it is running
// (kernels/lab/gpu_wait.h) through a pipe and sends its result as one JSON document; the parent
// ends it (SIGKILL, which also ends its kernel: the driver tears its context down) when one wait
// passes the timeout or the whole child the limit, reaps it, and reports what happened. The child
// dies with the parent (PR_SET_PDEATHSIG) and leaves nothing behind.
//
// fork() without exec: the parent must not have touched CUDA before (a child cannot use a CUDA
// context its parent made), which is why the lab runs its learners' files first.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/lab/gpu_wait.h"

namespace laptime::lab {

struct ChildEnd {
  enum class How {
    Reported,  // the child sent its result
    TimedOut,  // a wait on the GPU passed the timeout: the child was ended
    Stopped,   // the whole child passed its limit: ended
    Died,      // it ended without a result (a signal, an exit)
  };
  How how = How::Died;
  nlohmann::json result;  // Reported: what `work` returned
  std::string phase;      // the last thing the child said it was running ("" if none)
  std::string why;        // otherwise, a clause: "was killed by signal 11 (Segmentation fault)"
  double seconds = 0;     // the child's wall time
};

// Runs `work` in a child process; `timeout_s` bounds each wait on the GPU, `limit_s` the child.
// An exception in `work` is reported as {"error": its sentence}.
ChildEnd run_in_child(const std::function<nlohmann::json()>& work, double timeout_s, double limit_s);

// Where a learner's kernel runs in this process instead (`laptime lab --once`, for a profiler or
// compute-sanitizer; the bench's check of `--kernel NAME=FILE.cu`): a thread that ends the process
// when one wait on the GPU passes `timeout_s`, after one sentence on standard error naming `what`
// and the phase. Nothing else can stop a kernel that never ends; an output file the process had
// begun stays as its temporary, which the next write of that file removes (docs/DESIGN-NOTES.md).
class ProcessWatchdog : public WaitWatch {
 public:
  ProcessWatchdog(double timeout_s, std::string what);
  ~ProcessWatchdog() override;
  ProcessWatchdog(const ProcessWatchdog&) = delete;
  ProcessWatchdog& operator=(const ProcessWatchdog&) = delete;
  void begin() override;
  void end() override;
  void phase(const std::string& what) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace laptime::lab
