// CUDA Graphs: how a replay becomes GPU work of its iteration, and how the kernels inside it get
// the layer of the NVTX range they were captured in.
//
// nsys traces a graph one of two ways (--cuda-graph-trace):
//   graph (default)  one CUPTI_ACTIVITY_KIND_GRAPH_TRACE record per replay: its GPU span, with the
//                    correlation id of its cudaGraphLaunch. The join makes it one operation
//                    (GpuOp::Kind::GraphReplay) of the iteration whose range holds the launch, so the
//                    lap, busy time, gaps and the verdict count it like any GPU work. Which kernels
//                    ran inside it is not recorded: the report says what is known (replays, their
//                    GPU time) and how to see more.
//   node             every kernel, memset and copy of every replay, each with its launch's
//                    correlation id and the graph node that ran it (graphNodeId); and
//                    CUDA_GRAPH_NODE_EVENTS, when and on which thread each node was made, and for a
//                    node that instantiation copied, the node it copied (originalGraphNodeId).
// laptime's own CUPTI capture records the node level (kernel records carry their node; the
// graph-node callbacks give each node's creation), so it reads the same way.
//
// The layer of a graph's operation is the NVTX range open on the thread that made its node, when it
// made it: stream capture makes a kernel's node inside the launch call, so inside the ranges the
// program had pushed then (laptime's layer ranges, PyTorch stage ranges pushed during
// torch.cuda.graph); cudaGraphAddKernelNode makes it wherever it is called. The executable's node is
// followed back through its originals to the node that was made first (a bounded walk: a loop of
// originals names no node). An operation whose node was made outside every range, or whose node the
// trace does not describe, takes the range around its launch, as eager work does.
//
// An executable updated with cudaGraphExecUpdate keeps its node ids, and nsys records neither the
// graph it was updated from nor which node took which: its operations keep the layers of the nodes it
// was instantiated from (the update requires the same topology, so they are the same kinds of work),
// and the report says an update happened. A replay recorded both whole and by its nodes (a capture
// that asked for both) counts once, by its nodes.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// What the steady iterations ran through CUDA Graphs (filled by summarize_graphs; a part of
// question 3's answer, kernels.h's KernelMix).
struct GraphSummary {
  size_t replays = 0;         // replays traced whole (nsys's default graph trace)
  Ns replay_time = 0;         // their GPU spans, summed
  std::set<uint32_t> graphs;  // the graphs they replayed (graphId)
  size_t node_ops = 0;        // operations run by graph nodes (node-level trace)
  size_t node_ops_named = 0;  // of those, named by the range their node was made in
  Ns node_time = 0;           // their GPU time
  size_t launches = 0;        // cudaGraphLaunch calls that launched them
  size_t updates = 0;         // cudaGraphExecUpdate calls made before the last steady iteration ended
  bool any() const { return replays > 0 || node_ops > 0; }
};

// Once the GPU spans are known (utilization.h), before the lap is chosen: when every steady
// iteration's GPU work was run by graphs and its range is much shorter than its GPU span, the range
// measures the launch (cudaGraphLaunch returns once the replay is queued), not the lap: says so in
// `notes`, and makes the lap the GPU's (ops_of: indices into j.ops() per iteration).
void graph_launch_ranges(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of, Iterations& r,
                         std::vector<std::string>& notes);

// Fills `out` from the steady iterations' GPU work and adds the notes a graph capture needs:
// operations that take their launch's range, executables updated in place, replays traced twice.
void summarize_graphs(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                      const std::vector<Iteration>& iterations, GraphSummary& out, std::vector<std::string>& notes);

}  // namespace laptime::trace
