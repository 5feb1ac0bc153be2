// The joins every view needs, made once per trace: each piece of GPU work with the host call
// that launched it (on pid + correlation id, trace/trace.h) and the innermost NVTX range that
// call sat in; the ranges and API calls of each thread, by time.
//
// Every analysis and writer reads the trace through a TraceJoin; a reader that adds a kind
// of GPU work (a CUDA Graph node, say) adds it here once, and every question sees it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/category.h"
#include "trace/trace.h"

namespace laptime::trace {

// One GPU operation joined with the host call that launched it and the NVTX range that call
// sat in.
struct GpuOp {
  enum class Kind { Kernel, Memcpy, Memset };
  Kind kind = Kind::Kernel;
  int index = -1;  // into Trace::kernels, ::memcpys or ::memsets
  Ns start = 0, end = 0;
  uint32_t pid = 0, device = 0, stream = 0;
  int api = -1;    // the launch call, index into Trace::api_calls; -1 when not captured
  int range = -1;  // innermost NVTX range around the launch call, index into Trace::nvtx
  Category category = Category::Other;
  std::string label;  // kernel short name, "[CUDA memcpy HtoD]", "[CUDA memset]"
};

class TraceJoin {
 public:
  explicit TraceJoin(const Trace& t);
  const Trace& trace() const { return t_; }
  const std::vector<GpuOp>& ops() const { return ops_; }  // by start time
  // The innermost NVTX range on thread (pid, tid) that contains time `at`, or -1.
  int innermost_range(uint32_t pid, uint32_t tid, Ns at) const;
  int api_range(int api) const { return api < 0 ? -1 : api_range_[api]; }
  // The range's text and its ancestors' texts, innermost first.
  std::vector<std::string> range_chain(int range) const;
  // API calls of one thread, indices into Trace::api_calls by start time (empty if none).
  const std::vector<int>& thread_calls(uint32_t pid, uint32_t tid) const;

 private:
  const Trace& t_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> ranges_by_thread_, calls_by_thread_;
  std::vector<int> api_range_;
  std::vector<GpuOp> ops_;
};

}  // namespace laptime::trace
