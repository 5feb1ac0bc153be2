// Question 3: which kernels run? By category (trace/model/category.h: library names first, then the
// enclosing NVTX range, then generic names), by kernel, and by the layer range that launched
// them, over the steady iterations.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/model/category.h"
#include "trace/analyses/graph.h"
#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

struct CategoryRow {
  Category category = Category::Other;
  size_t count = 0;  // over all steady iterations
  Ns time = 0;
};

struct KernelRow {
  std::string name;  // short name
  Category category = Category::Other;
  size_t count = 0;
  Ns time = 0, min = 0, max = 0;
};

struct RangeRow {
  std::string range;  // innermost NVTX range of the launch ("h.3.attn"), or a pattern ("h.*.attn");
                      // for a graph node's work, of the node's creation (trace/analyses/graph.h)
  size_t count = 0;
  Ns time = 0;
  Ns time_by_category[kCategoryCount] = {};  // graph replays traced whole count in none
  Ns graph_replay_time = 0;                  // ... but here
};

// Question 3's answer (a part of trace/analyses/analysis.h's Analysis).
struct KernelMix {
  Ns gpu_time = 0;                      // sum of kernel+copy+memset (and graph replay) durations over steady iterations
  Ns htod_time = 0;                     // host-to-device copy time inside steady iterations
  GraphSummary graphs;                  // what ran through CUDA Graphs (trace/analyses/graph.h)
  std::vector<CategoryRow> categories;  // every category, largest first (replays traced whole: in none)
  std::vector<KernelRow> kernels;       // by time, all of them
  std::vector<RangeRow> ranges;         // by innermost range, by time
  std::vector<RangeRow> range_patterns;  // the same with block indices folded: h.*.attn
};

// Fills `out` from the GPU work of the steady iterations (ops_of: utilization.h's ops_by_iteration).
void kernel_mix(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                const std::vector<Iteration>& iterations, KernelMix& out);

// "h.3.attn" -> "h.*.attn", "layer2.1.conv2" -> "layer2.*.conv2": the block indices folded,
// as the by-layer table folds them (`laptime diff` aligns layers with it).
std::string fold_block_indices(const std::string& range);

}  // namespace laptime::trace
