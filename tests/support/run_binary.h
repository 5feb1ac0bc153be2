// Running a command line through the shell for the tests that check the real `laptime`
// binary: its exit status and what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

namespace laptime::testing_support {

struct RunResult {
  int status = -1;  // the exit status, -1 when killed by a signal
  std::string out;  // standard output, and standard error when the command sends it there
};

// `timeout 60`: a regression that blocks fails the test instead of hanging it.
inline RunResult run_shell(const std::string& command) {
  const std::string cmd = "timeout 60 " + command;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  RunResult r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe.release());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace laptime::testing_support
