#include "bench/lab/try_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "core/check.h"
#include "kernels/lab/gpu_wait.h"

namespace laptime::lab {
namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the parent is gone
    done += static_cast<size_t>(n);
  }
}

// The child's side: every wait and phase as one line on the pipe (W, D, P text).
class PipeWatch : public WaitWatch {
 public:
  explicit PipeWatch(int fd) : fd_(fd) {}
  void begin() override { write_all(fd_, "W\n"); }
  void end() override { write_all(fd_, "D\n"); }
  void phase(const std::string& what) override {
    std::string line = "P ";
    for (char c : what) line += c == '\n' ? ' ' : c;
    write_all(fd_, line + "\n");
  }

 private:
  int fd_;
};

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

[[noreturn]] void child_main(int fd, pid_t parent, const std::function<nlohmann::json()>& work) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(2);  // the parent died before the line above
  PipeWatch watch(fd);
  set_wait_watch(&watch);
  nlohmann::json result;
  try {
    result = work();
  } catch (const std::exception& e) {
    result = {{"error", e.what()}};
  }
  set_wait_watch(nullptr);
  write_all(fd, "R " + dump(result) + "\n");
  _exit(0);  // no atexit handlers or static destructors of the parent's state
}

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace

ChildEnd run_in_child(const std::function<nlohmann::json()>& work, double timeout_s, double limit_s) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot make a pipe for the lab's child: ") + strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(std::string("cannot start the lab's child process: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], parent, work);
  }
  close(fds[1]);
  ChildEnd end;
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> waiting;
  std::string buffer;
  bool reported = false, eof = false;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  while (!eof) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      char chunk[4096];
      const ssize_t n = read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
      } else {
        buffer.append(chunk, static_cast<size_t>(n));
        for (size_t nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
          const std::string line = buffer.substr(0, nl);
          buffer.erase(0, nl + 1);
          if (line == "W") {
            waiting = Clock::now();
          } else if (line == "D") {
            waiting.reset();
          } else if (line.rfind("P ", 0) == 0) {
            end.phase = line.substr(2);
          } else if (line.rfind("R ", 0) == 0) {
            end.result = nlohmann::json::parse(line.substr(2), nullptr, false);
            reported = !end.result.is_discarded();
          }
        }
      }
    }
    const bool hung = waiting && seconds_since(*waiting) > timeout_s;
    const bool over = seconds_since(start) > limit_s;
    if (!eof && (hung || over)) {
      kill(pid, SIGKILL);
      end.how = hung ? ChildEnd::How::TimedOut : ChildEnd::How::Stopped;
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  end.seconds = seconds_since(start);
  if (end.how == ChildEnd::How::TimedOut || end.how == ChildEnd::How::Stopped) return end;
  if (reported) {
    end.how = ChildEnd::How::Reported;
    return end;
  }
  end.how = ChildEnd::How::Died;
  end.why = WIFSIGNALED(status) ? signal_text(WTERMSIG(status))
                                : "ended (exit status " + std::to_string(WEXITSTATUS(status)) + ") without a result";
  return end;
}

struct ProcessWatchdog::State {
  double timeout_s;
  std::string what, phase;
  std::mutex m;
  std::condition_variable cv;
  std::optional<Clock::time_point> waiting;
  bool stop = false;
  std::thread thread;
};

ProcessWatchdog::ProcessWatchdog(double timeout_s, std::string what) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.timeout_s = timeout_s;
  s.what = std::move(what);
  s.thread = std::thread([&s] {
    std::unique_lock<std::mutex> lock(s.m);
    while (!s.stop) {
      s.cv.wait_for(lock, std::chrono::milliseconds(50));
      if (s.waiting && std::chrono::duration<double>(Clock::now() - *s.waiting).count() > s.timeout_s) {
        std::fprintf(stderr, "laptime: %s ran past --timeout %g s in a wait on the GPU%s: stopped.\n", s.what.c_str(),
                     s.timeout_s, s.phase.empty() ? "" : (" (" + s.phase + ")").c_str());
        std::fflush(stderr);
        _exit(1);
      }
    }
  });
  set_wait_watch(this);
}

ProcessWatchdog::~ProcessWatchdog() {
  set_wait_watch(nullptr);
  {
    std::lock_guard<std::mutex> lock(state_->m);
    state_->stop = true;
  }
  state_->cv.notify_all();
  state_->thread.join();
}

void ProcessWatchdog::begin() {
  std::lock_guard<std::mutex> lock(state_->m);
  state_->waiting = Clock::now();
}

void ProcessWatchdog::end() {
  std::lock_guard<std::mutex> lock(state_->m);
  state_->waiting.reset();
}

void ProcessWatchdog::phase(const std::string& what) {
  std::lock_guard<std::mutex> lock(state_->m);
  state_->phase = what;
}

}  // namespace laptime::lab
