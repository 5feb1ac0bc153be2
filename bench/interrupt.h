// Ctrl-C during `laptime bench`: the first SIGINT only raises a flag that the timing loop
// checks before each iteration, so the run ends early but cleanly: the statistics of the
// iterations done so far are printed, --json and --trace are written, and the exit code is
// 130 (128 + SIGINT, as a shell reports a command ended by Ctrl-C). A second SIGINT exits at
// once with 130 (temporaries of unfinished outputs are then cleaned by the next run).
#pragma once

namespace laptime {

inline constexpr int kInterruptedExitCode = 130;

// Installs the handler for its lifetime and restores the previous one after. One at a time.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // Whether a SIGINT arrived since this guard was made.
  bool requested() const;
};

}  // namespace laptime
