#include "trace/analyses/kernel_mix.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "trace/model/format.h"

namespace laptime::trace {

namespace {
const std::string kNoRange = "(no range)";  // detail::range_text's word for -1
}  // namespace

void kernel_mix(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of,
                const std::vector<Iteration>& iterations, KernelMix& out) {
  const Trace& t = j.trace();
  std::map<Category, CategoryRow> cats;
  for (int c = 0; c < kCategoryCount; ++c) cats[static_cast<Category>(c)].category = static_cast<Category>(c);
  // Accumulated by interned name and range index (no string built or compared per op), then
  // ordered by text as the tables always were.
  std::unordered_map<const void*, KernelRow> kernels[kCategoryCount];
  // By the layer's text (its Name's key; kNoRange's address for none), not by range: the tables
  // below add rows up by text, and a million-kernel trace has tens of thousands of ranges (one
  // per op with emit_nvtx) but few texts.
  struct Layer {
    const std::string* text = nullptr;
    RangeRow row;
  };
  std::unordered_map<const void*, Layer> layers;
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (!iterations[i].steady()) continue;
    for (int k : ops_of[i]) {
      const GpuOp& op = j.ops()[k];
      const Ns d = op.end - op.start;
      out.gpu_time += d;
      auto [layer, fresh] = layers.try_emplace(op.layer < 0 ? &kNoRange : t.nvtx[op.layer].text.key());
      if (fresh) layer->second.text = op.layer < 0 ? &kNoRange : &t.nvtx[op.layer].text.str();
      RangeRow& rr = layer->second.row;
      ++rr.count;
      rr.time += d;
      // A replay traced whole is GPU time whose kernels the trace does not name: in no category.
      (op.kind == GpuOp::Kind::GraphReplay ? rr.graph_replay_time
                                           : rr.time_by_category[static_cast<int>(op.category)]) += d;
      if (op.kind == GpuOp::Kind::GraphReplay) continue;
      CategoryRow& c = cats[op.category];
      ++c.count;
      c.time += d;
      KernelRow& kr = kernels[static_cast<int>(op.category)][op.label.key()];
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
  std::stable_sort(out.categories.begin(), out.categories.end(),
                   [](const CategoryRow& x, const CategoryRow& y) { return x.time > y.time; });
  for (const auto& by_name : kernels)
    for (const auto& [key, row] : by_name) out.kernels.push_back(row);
  std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelRow& x, const KernelRow& y) {
    return std::tie(x.name, x.category) < std::tie(y.name, y.category);
  });
  std::stable_sort(out.kernels.begin(), out.kernels.end(),
                   [](const KernelRow& x, const KernelRow& y) { return x.time > y.time; });
  // The layer, as it is and with block indices folded: each distinct name folded once.
  std::map<std::string, RangeRow> by_text, patterns;
  auto add = [](std::map<std::string, RangeRow>& table, const std::string& key, const RangeRow& r) {
    RangeRow& rr = table[key];
    rr.range = key;
    rr.count += r.count;
    rr.time += r.time;
    rr.graph_replay_time += r.graph_replay_time;
    for (int c = 0; c < kCategoryCount; ++c) rr.time_by_category[c] += r.time_by_category[c];
  };
  for (const auto& [key, layer] : layers) {
    add(by_text, *layer.text, layer.row);
    add(patterns, detail::fold_indices(*layer.text), layer.row);  // once per distinct text
  }
  for (auto* table : {&by_text, &patterns}) {
    std::vector<RangeRow>& rows = table == &by_text ? out.ranges : out.range_patterns;
    for (auto& [key, row] : *table) rows.push_back(row);
    std::stable_sort(rows.begin(), rows.end(), [](const RangeRow& x, const RangeRow& y) { return x.time > y.time; });
  }
}

std::string fold_block_indices(const std::string& range) { return detail::fold_indices(range); }

}  // namespace laptime::trace
