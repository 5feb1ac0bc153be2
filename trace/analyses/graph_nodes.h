// The graph nodes a trace describes, by id: which node an executable's node was copied from, back
// to the node that was made first (trace/analyses/graph.h says why that is the one whose range counts).
// Below the join, which gives each graph operation its node's range; graph.h, above the
// questions, says what the steady iterations ran through graphs.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "trace/model/trace.h"

namespace laptime::trace {

// (pid, node id) -> the record of the node's creation.
class GraphNodeIndex {
 public:
  explicit GraphNodeIndex(const Trace& t);
  bool empty() const { return by_id_.empty(); }
  // The node that `id` (an executable's node, as a kernel record names it) was copied from, and
  // that from, back to the node that was made first; null when the trace holds no record of one of
  // them, or the copies loop.
  const GraphNode* origin(uint32_t pid, uint64_t id) const;

 private:
  const Trace& t_;
  std::map<std::pair<uint32_t, uint64_t>, int> by_id_;  // into Trace::graph_nodes
};

}  // namespace laptime::trace
