#include "trace/analyses/graph.h"

#include <algorithm>

#include "trace/model/format.h"

namespace laptime::trace {

namespace {

bool is_exec_update(const std::string& api) { return api == "cudaGraphExecUpdate" || api == "cuGraphExecUpdate"; }

}  // namespace

void graph_launch_ranges(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of, Iterations& r,
                         std::vector<std::string>& notes) {
  Ns host = 0, gpu = 0;
  size_t n = 0;
  for (size_t i = 0; i < r.iterations.size(); ++i) {
    const Iteration& it = r.iterations[i];
    if (!it.steady() || !it.has_gpu) continue;
    for (int k : ops_of[i])
      if (!j.ops()[k].in_graph) return;  // eager work in the range: the range is more than a launch
    host += it.duration();
    gpu += it.gpu_span();
    ++n;
  }
  // Half the GPU span: a loop that waits for each replay has ranges as long as the replay.
  if (n == 0 || host * 2 >= gpu) return;
  std::string note = detail::format(
      "The `%s` ranges only launch CUDA Graphs, and a launch returns once its replay is queued: a range measures "
      "the launch (%.3f ms on the host, mean), the GPU runs the graph after it (%.3f ms, mean)",
      r.range_name.c_str(), host / 1e6 / n, gpu / 1e6 / n);
  // The GPU's lap needs two steady iterations in a row (iteration_statistics falls back to the host).
  const bool gpu_lap = n >= 2 && !r.lap_from_gpu;
  note += gpu_lap ? ", so the lap is the GPU's start to next start." : ".";
  notes.push_back(note);
  r.lap_from_gpu = r.lap_from_gpu || gpu_lap;
}

void summarize_graphs(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                      const std::vector<Iteration>& iterations, GraphSummary& g, std::vector<std::string>& notes) {
  const Trace& t = j.trace();
  std::set<int> launches;
  Ns last_steady = 0;
  for (size_t i = 0; i < iterations.size(); ++i) {
    const Iteration& it = iterations[i];
    if (!it.steady()) continue;
    last_steady = std::max(last_steady, it.end);
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      if (!op.in_graph) continue;
      if (op.api >= 0) launches.insert(op.api);
      if (op.kind == GpuOp::Kind::GraphReplay) {
        ++g.replays;
        g.replay_time += op.end - op.start;
        g.graphs.insert(t.graph_replays[op.index].graph);
      } else {
        ++g.node_ops;
        g.node_ops_named += op.layer != op.range ? 1 : 0;
        g.node_time += op.end - op.start;
      }
    }
  }
  g.launches = launches.size();
  if (g.node_ops > g.node_ops_named)
    notes.push_back(std::to_string(g.node_ops - g.node_ops_named) + " of the " + std::to_string(g.node_ops) +
                    " operations graph nodes ran have no NVTX range from their node's creation (the node was made "
                    "outside every range, or the trace does not record it): they count under the range of their "
                    "graph's launch.");
  // Updated executables matter where layers come from nodes (see the top of graph.h).
  Ns first_update = -1;
  // The iterations' own process only: another program's graph updates change none of its nodes.
  const uint32_t pid = iterations.empty() ? 0 : t.nvtx[iterations.front().nvtx].pid;
  for (const ApiCall& c : t.api_calls)
    if (is_exec_update(c.name) && c.start < last_steady && c.pid == pid) {
      ++g.updates;
      if (first_update < 0) first_update = c.start;
    }
  if (g.node_ops && g.updates) {
    std::string when;
    for (const Iteration& it : iterations)
      if (it.steady() && it.start > first_update) {
        when = ", before iteration " + std::to_string(it.index);
        break;
      }
    notes.push_back("The program updated an executable graph in place (" + std::to_string(g.updates) +
                    (g.updates == 1 ? " cudaGraphExecUpdate call" : " cudaGraphExecUpdate calls") + when +
                    "): the trace records neither the graph it was updated from nor which node took which, so "
                    "the work replayed after it keeps the layers of the nodes the executable was instantiated "
                    "from.");
  }
  if (const size_t twice = j.replays_traced_by_nodes())
    notes.push_back(std::to_string(twice) + (twice == 1 ? " graph replay was" : " graph replays were") +
                    " recorded both whole and node by node: counted once, by its nodes.");
}

}  // namespace laptime::trace
