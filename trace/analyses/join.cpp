#include "trace/analyses/join.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "trace/analyses/graph_nodes.h"

namespace laptime::trace {

namespace {

// innermost_range's steps for one thread's ranges (by start, as Trace::nvtx holds them): after
// each range starts, it is the answer until it ends, then the first ancestor open after that,
// and so on, until the next range starts.
void build_timeline(const std::vector<NvtxEvent>& nvtx, const std::vector<int>& rs, std::vector<Ns>& starts,
                    std::vector<int>& ranges) {
  starts.reserve(rs.size() + 8);
  ranges.reserve(rs.size() + 8);
  for (size_t k = 0; k < rs.size(); ++k) {
    const bool last = k + 1 == rs.size();
    const Ns next = last ? 0 : nvtx[rs[k + 1]].start;
    int a = rs[k];
    starts.push_back(nvtx[a].start);
    ranges.push_back(a);
    // `a` answers until its end; past it, the first ancestor still open (ends only grow upward).
    while (a >= 0 && (last || nvtx[a].end < next - 1)) {
      const Ns t = nvtx[a].end + 1;
      while (a >= 0 && nvtx[a].end < t) a = nvtx[a].parent;
      starts.push_back(t);
      ranges.push_back(a);
    }
  }
}

}  // namespace

TraceJoin::TraceJoin(const Trace& t) : t_(t) {
  {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> by_thread;
    for (size_t i = 0; i < t.nvtx.size(); ++i) by_thread[{t.nvtx[i].pid, t.nvtx[i].tid}].push_back(static_cast<int>(i));
    for (const auto& [thread, rs] : by_thread) {
      Timeline& tl = timelines_[thread];
      build_timeline(t.nvtx, rs, tl.starts, tl.ranges);
    }
  }
  // Each thread's list sized first (grown by doubling, 10^7 calls on one thread held 67 MB for
  // 42); none when one thread made every call (ThreadCalls).
  std::map<std::pair<uint32_t, uint32_t>, size_t> calls_on;
  for (const ApiCall& c : t.api_calls) ++calls_on[{c.pid, c.tid}];
  if (calls_on.size() == 1) {
    only_thread_ = calls_on.begin()->first;
  } else {
    for (const auto& [thread, n] : calls_on) calls_by_thread_[thread].reserve(n);
    for (size_t i = 0; i < t.api_calls.size(); ++i)
      calls_by_thread_[{t.api_calls[i].pid, t.api_calls[i].tid}].push_back(static_cast<int>(i));
  }

  const GraphNodeIndex nodes(t);
  std::set<std::pair<uint32_t, uint64_t>> node_launches;  // (pid, correlation) of launches traced by node
  ops_.reserve(t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.graph_replays.size());
  auto add = [&](GpuOp::Kind kind, int index, const GpuWork& w, Name label) {
    GpuOp op;
    op.kind = kind;
    op.index = index;
    op.start = w.start;
    op.end = w.end;
    op.pid = w.pid;
    op.device = w.device;
    op.stream = w.stream;
    op.api = w.api;
    op.range = api_range(op.api);
    op.layer = op.range;
    op.in_graph = kind == GpuOp::Kind::GraphReplay || w.graph_node != kNoGraphNode;
    if (w.graph_node != kNoGraphNode) {
      node_launches.insert({w.pid, w.correlation});
      if (const GraphNode* n = nodes.origin(w.pid, w.graph_node))
        if (const int r = innermost_range(n->pid, n->tid, n->created); r >= 0) op.layer = r;
    }
    op.label = label;
    ops_.push_back(std::move(op));
  };
  for (size_t i = 0; i < t.kernels.size(); ++i)
    add(GpuOp::Kind::Kernel, static_cast<int>(i), t.kernels[i], t.kernels[i].short_name);
  const size_t copies = ops_.size();
  std::map<CopyKind, Name> copy_labels;  // interned once per kind
  for (size_t i = 0; i < t.memcpys.size(); ++i) {
    auto [label, fresh] = copy_labels.try_emplace(t.memcpys[i].kind);
    if (fresh) label->second = t.names->intern(std::string("[CUDA memcpy ") + copy_kind_name(t.memcpys[i].kind) + "]");
    add(GpuOp::Kind::Memcpy, static_cast<int>(i), t.memcpys[i], label->second);
  }
  const size_t memsets = ops_.size();
  const Name memset_label = t.names->intern("[CUDA memset]");
  for (size_t i = 0; i < t.memsets.size(); ++i)
    add(GpuOp::Kind::Memset, static_cast<int>(i), t.memsets[i], memset_label);
  const size_t replays = ops_.size();
  // A replay whose nodes were traced too is already there, node by node.
  for (size_t i = 0; i < t.graph_replays.size(); ++i) {
    const GraphReplay& g = t.graph_replays[i];
    if (node_launches.count({g.pid, g.correlation})) {
      ++replays_by_nodes_;
      continue;
    }
    add(GpuOp::Kind::GraphReplay, static_cast<int>(i), g,
        t.names->intern("[CUDA graph " + std::to_string(g.graph) + "]"));
  }
  classify_ops();
  merge_ops(copies, memsets, replays);
}

// Each op's category: classify_kernel, rule by rule, each once per distinct name.
void TraceJoin::classify_ops() {
  const Trace& t = t_;
  // The category a range gives (its
  // own rule, else its parent's: parents come first in Trace::nvtx), then per kernel name.
  std::unordered_map<const void*, std::optional<Category>> by_range_name;
  std::vector<std::optional<Category>> range_category(t.nvtx.size());
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    auto [it, fresh] = by_range_name.try_emplace(t.nvtx[r].text.key());
    if (fresh) it->second = category_by_range(t.nvtx[r].text);
    const int parent = t.nvtx[r].parent;
    range_category[r] = it->second ? it->second : parent >= 0 ? range_category[parent] : std::nullopt;
  }
  struct ByName {
    std::optional<Category> library;
    Category generic = Category::Other;
  };
  std::map<std::pair<const void*, const void*>, ByName> by_kernel_name;
  for (GpuOp& op : ops_) {
    if (op.kind == GpuOp::Kind::Kernel) {
      const Kernel& k = t.kernels[op.index];
      auto [it, fresh] = by_kernel_name.try_emplace({k.short_name.key(), k.name.key()});
      if (fresh) {
        it->second.library = category_by_library_name(k.short_name, k.name);
        it->second.generic = category_by_generic_name(k.short_name);
      }
      const std::optional<Category> from_range = op.layer >= 0 ? range_category[op.layer] : std::nullopt;
      op.category = it->second.library ? *it->second.library : from_range ? *from_range : it->second.generic;
    } else if (op.kind == GpuOp::Kind::GraphReplay) {
      op.category = Category::Other;  // its kernels are not in the trace; the kernel mix counts replays apart
    } else {
      op.category = Category::MemcpyMemset;
    }
  }
}

void TraceJoin::merge_ops(size_t copies, size_t memsets, size_t replays) {
  // Each list is sorted by start (Trace::finalize): merged, ties kept kernels, copies, memsets,
  // replays, as a stable sort of the four one after the other keeps them, without sorting a
  // million ops.
  const auto by_start = [](const GpuOp& a, const GpuOp& b) { return a.start < b.start; };
  const auto at = [&](size_t i) { return ops_.begin() + static_cast<long>(i); };
  const bool sorted_lists = std::is_sorted(at(replays), ops_.end(), by_start);
  if (sorted_lists) {
    std::inplace_merge(ops_.begin(), at(copies), at(memsets), by_start);
    std::inplace_merge(ops_.begin(), at(memsets), at(replays), by_start);
    std::inplace_merge(ops_.begin(), at(replays), ops_.end(), by_start);
  } else {
    std::stable_sort(ops_.begin(), ops_.end(), by_start);
  }
}

int TraceJoin::api_range(int api) const {
  if (api < 0) return -1;
  const ApiCall& c = t_.api_calls[api];
  return innermost_range(c.pid, c.tid, c.start);
}

int TraceJoin::innermost_range(uint32_t pid, uint32_t tid, Ns at) const {
  auto it = timelines_.find({pid, tid});
  if (it == timelines_.end()) return -1;
  const std::vector<Ns>& starts = it->second.starts;
  const auto pos = std::upper_bound(starts.begin(), starts.end(), at);
  return pos == starts.begin() ? -1 : it->second.ranges[static_cast<size_t>(pos - starts.begin()) - 1];
}

ThreadCalls TraceJoin::thread_calls(uint32_t pid, uint32_t tid) const {
  if (only_thread_)
    return *only_thread_ == std::make_pair(pid, tid) ? ThreadCalls(nullptr, t_.api_calls.size()) : ThreadCalls();
  auto it = calls_by_thread_.find({pid, tid});
  return it == calls_by_thread_.end() ? ThreadCalls() : ThreadCalls(it->second.data(), it->second.size());
}

}  // namespace laptime::trace
