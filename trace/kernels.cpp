#include "trace/kernels.h"

#include <algorithm>
#include <map>

#include "trace/text_util.h"

namespace laptime::trace {

void kernel_mix(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                const std::vector<Iteration>& iterations, KernelMix& out) {
  const Trace& t = j.trace();
  std::map<Category, CategoryRow> cats;
  for (int c = 0; c < kCategoryCount; ++c) cats[static_cast<Category>(c)].category = static_cast<Category>(c);
  std::map<std::pair<std::string, Category>, KernelRow> kernels;
  std::map<std::string, RangeRow> ranges, patterns;
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (!iterations[i].steady()) continue;
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      const Ns d = op.end - op.start;
      out.gpu_time += d;
      const std::string rname = detail::range_text(t, op.layer);
      for (auto* table : {&ranges, &patterns}) {  // the layer, as it is and with block indices folded
        const std::string key = table == &ranges ? rname : detail::fold_indices(rname);
        RangeRow& rr = (*table)[key];
        rr.range = key;
        ++rr.count;
        rr.time += d;
        // A replay traced whole is GPU time whose kernels the trace does not name: in no category.
        (op.kind == GpuOp::Kind::GraphReplay ? rr.graph_replay_time
                                             : rr.time_by_category[static_cast<int>(op.category)]) += d;
      }
      if (op.kind == GpuOp::Kind::GraphReplay) continue;
      CategoryRow& c = cats[op.category];
      ++c.count;
      c.time += d;
      KernelRow& kr = kernels[{op.label, op.category}];
      if (kr.count == 0) {
        kr.name = op.label;
        kr.category = op.category;
        kr.min = d;
      }
      ++kr.count;
      kr.time += d;
      kr.min = std::min(kr.min, d);
      kr.max = std::max(kr.max, d);
      if (op.kind == GpuOp::Kind::Memcpy && t.memcpys[op.index].kind == CopyKind::HtoD) out.htod_time += d;
    }
  }
  for (auto& [c, row] : cats) out.categories.push_back(row);
  std::stable_sort(out.categories.begin(), out.categories.end(), [](const CategoryRow& x, const CategoryRow& y) { return x.time > y.time; });
  for (auto& [key, row] : kernels) out.kernels.push_back(row);
  std::stable_sort(out.kernels.begin(), out.kernels.end(), [](const KernelRow& x, const KernelRow& y) { return x.time > y.time; });
  for (auto* table : {&ranges, &patterns}) {
    std::vector<RangeRow>& rows = table == &ranges ? out.ranges : out.range_patterns;
    for (auto& [key, row] : *table) rows.push_back(row);
    std::stable_sort(rows.begin(), rows.end(), [](const RangeRow& x, const RangeRow& y) { return x.time > y.time; });
  }
}

std::string fold_block_indices(const std::string& range) { return detail::fold_indices(range); }

}  // namespace laptime::trace
