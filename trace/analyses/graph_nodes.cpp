#include "trace/analyses/graph_nodes.h"

namespace laptime::trace {

namespace {

// Copies of copies are one or two deep in practice (an instantiated node, a clone instantiated):
// a longer walk is a loop, or a file written to make the reader spin.
constexpr int kMaxCopyDepth = 64;

}  // namespace

GraphNodeIndex::GraphNodeIndex(const Trace& t) : t_(t) {
  for (size_t i = 0; i < t.graph_nodes.size(); ++i) {
    const GraphNode& n = t.graph_nodes[i];
    // nsys writes an instantiated node twice, as made and then with the node it copies: the one
    // that names an original is the one that says where the node came from.
    auto [it, fresh] = by_id_.try_emplace({n.pid, n.id}, static_cast<int>(i));
    if (!fresh && n.original != kNoGraphNode) it->second = static_cast<int>(i);
  }
}

const GraphNode* GraphNodeIndex::origin(uint32_t pid, uint64_t id) const {
  for (int hop = 0; hop <= kMaxCopyDepth; ++hop) {
    auto it = by_id_.find({pid, id});
    if (it == by_id_.end()) return nullptr;
    const GraphNode& n = t_.graph_nodes[it->second];
    if (n.original == kNoGraphNode) return &n;
    id = n.original;
  }
  return nullptr;
}

}  // namespace laptime::trace
