#include "bench/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>

#include "core/check.h"

namespace laptime {
namespace {

volatile std::sig_atomic_t g_interrupts = 0;
struct sigaction g_previous {};
bool g_installed = false;

void on_sigint(int) {
  // Only async-signal-safe calls here: write(2) and _exit(2).
  if (g_interrupts) _exit(kInterruptedExitCode);
  g_interrupts = 1;
  static const char kNote[] =
      "\nlaptime: interrupted: finishing with the iterations done so far (Ctrl-C again to quit at once)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kNote, sizeof kNote - 1);
  (void)ignored;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  require(!g_installed, "internal error: two interrupt handlers at once.");
  g_interrupts = 0;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or write in progress resumes; the loop sees the flag
  require(::sigaction(SIGINT, &sa, &g_previous) == 0, "cannot install the Ctrl-C handler.");
  g_installed = true;
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &g_previous, nullptr);
  g_installed = false;
}

bool InterruptGuard::requested() const { return g_interrupts != 0; }

}  // namespace laptime
