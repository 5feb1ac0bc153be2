// libFuzzer target for the PyTorch profiler (Kineto) trace reader (build: tests/fuzz/CMakeLists.txt,
// run: tests/fuzz/run.sh). Every input, as a file (plain, or gzip when it starts with gzip's magic),
// must either load or be refused with a TraceError; any other exception, a crash, or an
// AddressSanitizer/UndefinedBehaviorSanitizer report is a finding. A loaded trace is then held to
// the reader's promises: every kept time in [0, 2^62) ns and no row ending before it starts, every
// join to an API call in range, every name free of what the writers cannot carry.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace/model/text.h"
#include "trace/model/validate.h"
#include "trace/read/kineto_json.h"

namespace {

void expect(bool cond, const char* what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz_kineto: broken promise: %s\n", what);
    std::abort();
  }
}

template <typename Rows>
void check_times(const Rows& rows) {
  for (const auto& r : rows)
    expect(r.start >= 0 && r.start <= r.end && r.end < laptime::trace::kMaxTime, "a row's times are ordered, in range");
}

template <typename Rows>
void check_joins(const laptime::trace::Trace& t, const Rows& rows) {
  for (const auto& w : rows)
    expect(w.api >= -1 && w.api < static_cast<int>(t.api_calls.size()), "a join names an API call of the trace");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader reads files: the input as one, in memory.
  const int fd = memfd_create("fuzz_kineto", 0);
  if (fd < 0) return 0;
  for (size_t done = 0; done < size;) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const laptime::trace::Trace t = laptime::trace::load_kineto_json(path);
    check_times(t.kernels), check_times(t.memcpys), check_times(t.memsets), check_times(t.api_calls);
    check_times(t.syncs), check_times(t.nvtx);
    check_joins(t, t.kernels), check_joins(t, t.memcpys), check_joins(t, t.memsets), check_joins(t, t.syncs);
    for (const auto& k : t.kernels) expect(!laptime::trace::needs_escape(k.name.str()), "kernel names are clean");
    for (const auto& r : t.nvtx) expect(!laptime::trace::needs_escape(r.text.str()), "range names are clean");
    for (const auto& [pid, name] : t.process_names)
      expect(!laptime::trace::needs_escape(name), "process names are clean");
  } catch (const laptime::trace::TraceError&) {
    // refused in one sentence: fine
  }
  close(fd);
  return 0;
}
