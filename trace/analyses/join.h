// The joins every view needs, made once per trace: each piece of GPU work with the host call
// that launched it (on pid + correlation id, trace/model/trace.h) and the innermost NVTX range that
// call sat in; the ranges and API calls of each thread, by time.
//
// Every analysis and writer reads the trace through a TraceJoin; a reader that adds a kind
// of GPU work adds it here once, and every question sees it: a CUDA Graph replay traced whole,
// and the layer of a graph node's work (trace/analyses/graph.h).
#pragma once

#include <cstdint>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/model/category.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// One GPU operation joined with the host call that launched it and the NVTX range that call
// sat in. A CUDA Graph replay traced whole is one operation; a node-level trace gives one per
// kernel, copy and memset the replay ran (trace/analyses/graph.h).
// One per operation (a million at 10^6 kernels): the fields are ordered so the row has no padding
// but its last byte (56 bytes).
struct GpuOp {
  enum class Kind : uint8_t { Kernel, Memcpy, Memset, GraphReplay };
  Ns start = 0, end = 0;
  Name label;      // kernel short name, "[CUDA memcpy HtoD]", "[CUDA memset]", "[CUDA graph 3]" (the trace's pool)
  int index = -1;  // into Trace::kernels, ::memcpys, ::memsets or ::graph_replays
  uint32_t pid = 0, device = 0, stream = 0;
  int api = -1;    // the launch call, index into Trace::api_calls; -1 when not captured
  int range = -1;  // innermost NVTX range around the launch call, index into Trace::nvtx
  // The range that names its layer: for work a graph node ran, the innermost range open where and
  // when the node was made, if one was; otherwise `range`.
  int layer = -1;
  Kind kind = Kind::Kernel;
  bool in_graph = false;  // run by a graph: a node's work, or a replay traced whole
  Category category = Category::Other;
};

// The API calls of one thread, indices into Trace::api_calls by start time. Where every call of
// the trace is on that one thread (a training loop's usual capture) they are every index, held as
// a count instead of 4 bytes a call (two calls a kernel).
class ThreadCalls {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int;
    iterator() = default;
    iterator(const int* list, difference_type i) : list_(list), i_(i) {}
    int operator*() const { return list_ ? list_[i_] : static_cast<int>(i_); }
    int operator[](difference_type n) const { return *(*this + n); }
    iterator& operator++() { return *this += 1; }
    iterator operator++(int) {
      iterator r = *this;
      ++*this;
      return r;
    }
    iterator& operator--() { return *this -= 1; }
    iterator operator--(int) {
      iterator r = *this;
      --*this;
      return r;
    }
    iterator& operator+=(difference_type n) {
      i_ += n;
      return *this;
    }
    iterator& operator-=(difference_type n) {
      i_ -= n;
      return *this;
    }
    friend iterator operator+(iterator a, difference_type n) { return a += n; }
    friend iterator operator+(difference_type n, iterator a) { return a += n; }
    friend iterator operator-(iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) { return a.i_ - b.i_; }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }
    friend bool operator!=(const iterator& a, const iterator& b) { return a.i_ != b.i_; }
    friend bool operator<(const iterator& a, const iterator& b) { return a.i_ < b.i_; }
    friend bool operator>(const iterator& a, const iterator& b) { return a.i_ > b.i_; }
    friend bool operator<=(const iterator& a, const iterator& b) { return a.i_ <= b.i_; }
    friend bool operator>=(const iterator& a, const iterator& b) { return a.i_ >= b.i_; }

   private:
    const int* list_ = nullptr;  // null: the index itself
    difference_type i_ = 0;
  };
  ThreadCalls() = default;
  ThreadCalls(const int* list, size_t n) : list_(list), n_(n) {}  // list null: the calls 0 .. n-1
  iterator begin() const { return {list_, 0}; }
  iterator end() const { return {list_, static_cast<std::ptrdiff_t>(n_)}; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }

 private:
  const int* list_ = nullptr;
  size_t n_ = 0;
};

class TraceJoin {
 public:
  explicit TraceJoin(const Trace& t);
  const Trace& trace() const { return t_; }
  const std::vector<GpuOp>& ops() const { return ops_; }  // by start time
  // The innermost NVTX range on thread (pid, tid) that contains time `at`, or -1: of the ranges
  // that started at or before `at`, the last (Trace::nvtx's order), or the first of its
  // ancestors still open at `at`. A binary search in the thread's timeline (below), however deep
  // the nesting.
  int innermost_range(uint32_t pid, uint32_t tid, Ns at) const;
  // The innermost NVTX range around API call `api` (an index into Trace::api_calls), or -1.
  int api_range(int api) const;
  // The layer's range and its ancestors up to (not including) the first that `stop` accepts,
  // innermost first: what a layer's time counts for (stop at the iteration ranges).
  template <class Stop>
  std::vector<int> layer_chain(const GpuOp& op, Stop stop) const {
    std::vector<int> chain;
    for (int r = op.layer; r >= 0 && !stop(r); r = t_.nvtx[r].parent) chain.push_back(r);
    return chain;
  }
  // Replays traced whole that were left out because the same launch's nodes were traced too.
  size_t replays_traced_by_nodes() const { return replays_by_nodes_; }
  // API calls of one thread, indices into Trace::api_calls by start time (empty if none).
  ThreadCalls thread_calls(uint32_t pid, uint32_t tid) const;

 private:
  void classify_ops();
  // ops_ holds kernels, then copies from `copies`, memsets from `memsets`, replays from `replays`,
  // each list sorted by start: merged into one order by start.
  void merge_ops(size_t copies, size_t memsets, size_t replays);

  const Trace& t_;
  // Per thread, the answer of innermost_range as a step function of time: from each `starts[k]`
  // on (until the next), the range `ranges[k]` (or -1). At most two steps per range, found in one
  // sweep that visits each range a bounded number of times: a range closed before the next one
  // starts is never again on a chain (a parent ends no earlier than its child), so 60,000 nested
  // ranges followed by 60,000 launches cost 120,000 steps, not 60,000 walks of 60,000 parents.
  struct Timeline {
    std::vector<Ns> starts;
    std::vector<int> ranges;
  };
  std::map<std::pair<uint32_t, uint32_t>, Timeline> timelines_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> calls_by_thread_;
  std::optional<std::pair<uint32_t, uint32_t>> only_thread_;  // every call's, when one thread made them all
  std::vector<GpuOp> ops_;
  size_t replays_by_nodes_ = 0;
};

}  // namespace laptime::trace
