#include "trace/ncu/ncu_layers.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "trace/analyses/kernel_mix.h"
#include "trace/analyses/roofline.h"
#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

using M = NcuMetric;
using detail::format;

bool known(double v) { return !std::isnan(v); }

// A mean over a layer's kernels weighted by their time, of the kernels that have the value.
struct Weighted {
  double sum = 0, weight = 0;
  void add(double v, double w) {
    if (known(v) && w > 0) sum += v * w, weight += w;
  }
  double mean() const { return weight > 0 ? sum / weight : kNaN; }
};

// A sum that is only meaningful when every kernel has its term.
struct Total {
  double sum = 0;
  size_t missing = 0;
  void add(double v) {
    if (known(v))
      sum += v;
    else
      ++missing;
  }
  double value() const { return missing ? kNaN : sum; }
};

struct Acc {
  size_t index = 0;  // into the layers, in order of first appearance
  Total dram, flops;
  Weighted dram_pct, memory_pct, compute_pct, tensor_pct, occupancy, theoretical, warps;
  std::vector<double> stall_cycles, stall_inst;
  size_t longest = SIZE_MAX;  // kernel index
  std::set<std::string> domains;
  std::unordered_map<std::string, uint32_t> kernel_names;  // its layer's kernel_names, found in O(1)
  std::unordered_set<std::string> ranges;                  // its layer's ranges, likewise
};

double dram_bytes(const NcuKernel& k) { return k.at(M::DramBytesPerSecond) * k.at(M::Time) * 1e-9; }

// FP32 and FP64 FLOPs from the SASS counters, as ncu's roofline counts them: an FMA is two.
double counted_flops(const NcuKernel& k) {
  const double per_cycle = k.at(M::FaddRate) + k.at(M::FmulRate) + 2 * k.at(M::FfmaRate) + k.at(M::DaddRate) +
                           k.at(M::DmulRate) + 2 * k.at(M::DfmaRate);
  return per_cycle * k.at(M::SmspCyclesPerSecond) * k.at(M::Time) * 1e-9;
}

std::string resolve_domain(const std::string& d) { return d == "default" ? "<default domain>" : d; }

// The innermost range of kernel `k` (of `domain` when given), or -1.
int innermost(const NcuReport& r, const NcuKernel& k, int domain) {
  for (size_t i = k.ranges().size(); i-- > 0;)
    if (domain < 0 || k.ranges()[i].domain == domain) return static_cast<int>(i);
  return -1;
}

void finish_launch(const NcuReport& r, const NcuKernel& k, NcuLayerMetrics& m) {
  m.waves = k.at(M::Waves);
  m.grid = k.at(M::GridSize);
  m.block = k.at(M::BlockSize);
  m.registers = k.at(M::Registers);
  m.shared_bytes = k.at(M::SharedMemoryPerBlock);
  m.sm_count = r.sm_count > 0 ? r.sm_count : kNaN;
  const std::pair<M, const char*> limits[] = {{M::LimitRegisters, "registers"},
                                              {M::LimitSharedMemory, "shared memory"},
                                              {M::LimitWarps, "block size"},
                                              {M::LimitBlocks, "blocks a SM"},
                                              {M::LimitBarriers, "barriers"}};
  for (const auto& [metric, name] : limits)
    if (k.has(metric) && !(m.blocks_per_sm <= k.at(metric))) m.blocks_per_sm = k.at(metric);
  const bool capped = !k.has(M::TheoreticalOccupancyPct) || k.at(M::TheoreticalOccupancyPct) < 99.95;
  if (known(m.blocks_per_sm) && capped)
    for (const auto& [metric, name] : limits)
      if (k.has(metric) && k.at(metric) == m.blocks_per_sm) m.limiters.push_back(name);
}

// The layer costs of each row, when every range in it has an entry and none of those entries
// has a part that is a row's range of its own (its kernels would then be counted twice).
void join_costs(const LayerCosts& costs, const Ceilings* ceilings, const std::set<std::string>& measured,
                std::vector<NcuLayer>& layers, std::vector<std::string>& notes) {
  std::map<std::string, const LayerCostEntry*> entry;
  for (const LayerCostEntry& e : costs.layers) entry.emplace(e.name, &e);
  std::set<std::string> has_measured_part;
  for (const std::string& s : measured) {
    auto it = entry.find(s);
    // Up the parents, at most once per entry (a cycle in a damaged sidecar ends there too).
    for (size_t step = 0; it != entry.end() && step < costs.layers.size(); ++step) {
      it = entry.find(it->second->parent);
      if (it != entry.end()) has_measured_part.insert(it->first);
    }
  }
  std::vector<std::string> without, composite;
  double moved = 0, must = 0;
  for (NcuLayer& l : layers) {
    bool all = true, split = false;
    for (const std::string& name : l.ranges) {
      all = all && entry.count(name);
      split = split || has_measured_part.count(name);
    }
    if (!all || split) {
      (split ? composite : without).push_back(l.name);
      continue;
    }
    l.has_costs = true;
    for (const std::string& name : l.ranges) {
      const LayerCostEntry& e = *entry.at(name);
      l.must_flops += e.flops;
      l.must_bytes += e.bytes();
      l.must_read += e.weight_bytes + e.input_bytes;
      if (l.precision.empty() && !e.precision.empty()) l.precision = e.precision;
    }
    if (l.precision.empty()) l.precision = costs.precision;
    if (known(l.dram_bytes) && l.must_bytes > 0) {
      l.m.bytes_ratio = l.dram_bytes / l.must_bytes;
      if (l.must_read > 0) l.read_ratio = l.dram_bytes / l.must_read;
      moved += l.dram_bytes;
      must += l.must_bytes;
    }
    if (known(l.dram_bytes))
      l.measured = roofline_point(l.must_flops, l.dram_bytes, l.time_ns * 1e-9, ceilings, l.precision);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 6; ++i) s += (i ? ", " : "") + v[i];
    return s + (v.size() > 6 ? ", ..." : "");
  };
  if (!without.empty())
    notes.push_back(std::to_string(without.size()) + " of " + std::to_string(layers.size()) +
                    " layers have no entry in " + costs.source + ": " + list(without) + ".");
  if (!composite.empty())
    notes.push_back(list(composite) +
                    ": kernels launched in these ranges outside their parts; the sidecar's costs "
                    "cover the parts, so these rows get none.");
  if (must > 0 && (moved / must < 0.25 || moved / must > 4))
    notes.push_back(
        format("over the whole report the layers moved %.2fx the bytes %s says they must: is it of this "
               "run's shape (%s)?",
               moved / must, costs.source.c_str(), costs.shape.c_str()));
}

}  // namespace

const char* ncu_rule_name(NcuRule r) {
  switch (r) {
    case NcuRule::DramBoundExcess:
      return "dram-bound-excess";
    case NcuRule::DramBound:
      return "dram-bound";
    case NcuRule::ComputeBound:
      return "compute-bound";
    case NcuRule::OnChipBound:
      return "on-chip-bound";
    case NcuRule::ExcessTraffic:
      return "excess-traffic";
    case NcuRule::SmallGrid:
      return "small-grid";
    case NcuRule::LatencyPipeline:
      return "latency-pipeline";
    case NcuRule::LatencyOccupancy:
      return "latency-occupancy";
    case NcuRule::LatencyStalls:
      return "latency-stalls";
    case NcuRule::NoSingleLimit:
      return "no-single-limit";
    case NcuRule::Unknown:
      return "unknown";
  }
  return "unknown";
}

const char* stall_gloss(const std::string& r) {
  static const std::map<std::string, const char*> gloss{
      {"long_scoreboard", "waiting for global or local memory"},
      {"short_scoreboard", "waiting for shared memory or a special function"},
      {"barrier", "waiting at __syncthreads"},
      {"membar", "waiting at a memory fence"},
      {"math_pipe_throttle", "a math pipe is full"},
      {"mio_throttle", "the shared-memory/special-function queue is full"},
      {"lg_throttle", "the global-memory queue is full"},
      {"tex_throttle", "the texture queue is full"},
      {"wait", "a fixed-latency dependency"},
      {"not_selected", "ready, another warp issued"},
      {"no_instruction", "instruction cache miss"},
      {"imc_miss", "constant cache miss"},
      {"branch_resolving", "resolving a branch"},
      {"dispatch_stall", "the dispatcher stalled"},
      {"drain", "draining memory writes at exit"},
      {"sleeping", "sleeping"},
      {"gmma", "waiting for a warpgroup matrix multiply"},
      {"misc", "other"},
  };
  auto it = gloss.find(r);
  return it == gloss.end() ? "" : it->second;
}

NcuDiagnosis diagnose(const NcuLayerMetrics& m, const NcuThresholds& t) {
  const double D = m.dram_pct, Mem = m.memory_pct, C = m.compute_pct, R = m.bytes_ratio;
  auto pct = [](double v) { return format("%.0f%%", v); };
  if (!known(C) && !known(Mem) && !known(D))
    return {NcuRule::Unknown, "no speed-of-light metrics in the report (ncu's section SpeedOfLight)"};
  if (known(D) && D >= t.at_limit_pct) {
    if (known(R) && R >= t.excess_bytes)
      return {NcuRule::DramBoundExcess,
              format("memory-bound at %s of DRAM bandwidth, moving %.1fx the bytes it must: cut the re-reads (keep "
                     "tiles on chip, fuse with the layer that reads them)",
                     pct(D).c_str(), R)};
    return {NcuRule::DramBound,
            "memory-bound at " + pct(D) +
                " of DRAM bandwidth: at its floor; only moving fewer bytes (fusion, a smaller type) "
                "makes it faster"};
  }
  if (known(C) && C >= t.at_limit_pct) {
    const std::string tensor =
        known(m.tensor_pct) && m.tensor_pct >= 1 ? " (tensor pipe " + pct(m.tensor_pct) + ")" : "";
    return {NcuRule::ComputeBound, "compute-bound at " + pct(C) + " of the SMs' peak" + tensor +
                                       ": at its roof; only less work (fewer FLOPs, a faster type) makes it faster"};
  }
  if (known(Mem) && Mem >= t.at_limit_pct)
    return {NcuRule::OnChipBound, "bound by on-chip memory traffic (L1, shared memory or L2 at " + pct(Mem) +
                                      " of peak, DRAM " + (known(D) ? pct(D) : std::string("-")) +
                                      "): it re-reads cached data; fewer or wider accesses, no bank conflicts"};
  if (known(R) && R >= t.excess_bytes)
    return {NcuRule::ExcessTraffic, format("moves %.1fx the bytes it must: it re-reads its inputs or weights from DRAM "
                                           "(DRAM at %s of peak)",
                                           R, known(D) ? pct(D).c_str() : "-")};
  if (known(m.waves) && m.waves < t.small_grid_waves) {
    std::string slots;
    if (known(m.blocks_per_sm) && known(m.sm_count))
      slots =
          format(" (%.0f %s a SM x %.0f SMs)", m.blocks_per_sm, m.blocks_per_sm == 1 ? "block" : "blocks", m.sm_count);
    return {NcuRule::SmallGrid, format("too small for the GPU: %s %.0f blocks fill %.2f of one wave%s, most SMs sit "
                                       "idle; fuse it into a neighbour or give each launch more work",
                                       m.kernels > 1 ? "its longest kernel's" : "its", m.grid, m.waves, slots.c_str())};
  }
  if (known(C) && known(Mem) && C < t.latency_pct && Mem < t.latency_pct) {
    const std::string head = "latency-bound (compute " + pct(C) + ", memory " + pct(Mem) + ")";
    std::string stall;
    if (!m.stalls.empty()) {
      const char* g = stall_gloss(m.stalls[0].reason);
      stall = format("; top stall %s (%.1f cycles an instruction%s%s)", m.stalls[0].reason.c_str(), m.stalls[0].cycles,
                     *g ? ": " : "", g);
    }
    // One block a SM of three or more warpgroups (a producer and its consumers), capped by shared
    // memory (the ring of a TMA pipeline), the tensor pipe carrying the compute: the few warps are
    // the design, so occupancy is no lever; what holds the tensor pipe back is the pipeline. A
    // 256-thread block is not told apart from a kernel whose registers are full (the fused stem,
    // 241 a thread): it keeps latency-occupancy.
    const bool shared_capped = std::find(m.limiters.begin(), m.limiters.end(), "shared memory") != m.limiters.end();
    if (known(m.blocks_per_sm) && m.blocks_per_sm == 1 && known(m.block) && m.block >= 384 && shared_capped &&
        known(m.tensor_pct) && m.tensor_pct > 0 && m.tensor_pct >= 0.9 * C)
      return {NcuRule::LatencyPipeline,
              head + ": the tensor pipe at " + pct(m.tensor_pct) + " of peak, fed by one " +
                  (known(m.block) ? format("%.0f-thread ", m.block) : std::string()) +
                  "block a SM (a warp-specialized kernel: " +
                  (known(m.warps_per_scheduler) ? format("its %.1f warps a scheduler are", m.warps_per_scheduler)
                                                : std::string("its few warps are")) +
                  " its design, not the limit)" + stall +
                  "; what is left is its pipeline: each tile's loads before the first multiply and its "
                  "epilogue after the last, exposed where a SM has few tiles" +
                  (known(m.waves) ? format(" (%.2f waves)", m.waves) : std::string()) + " or a short loop over K"};
    if (known(m.warps_per_scheduler) && m.warps_per_scheduler < t.few_warps) {
      std::string cap;
      if (!m.limiters.empty()) {
        std::vector<std::string> why;
        for (const std::string& l : m.limiters) {
          if (l == "registers" && known(m.registers))
            why.push_back(format("registers (%.0f a thread)", m.registers));
          else if (l == "shared memory" && known(m.shared_bytes))
            why.push_back(format("shared memory (%.0f KiB a block)", m.shared_bytes / 1024));
          else if (l == "block size" && known(m.block))
            why.push_back(format("block size (%.0f threads)", m.block));
          else
            why.push_back(l);
        }
        cap = " capped at " + (known(m.theoretical_pct) ? pct(m.theoretical_pct) : std::string("-")) + " by " + why[0];
        for (size_t i = 1; i < why.size(); ++i) cap += (i + 1 == why.size() ? " and " : ", ") + why[i];
      } else if (known(m.theoretical_pct)) {
        cap = " of a theoretical " + pct(m.theoretical_pct);
      }
      return {NcuRule::LatencyOccupancy,
              head +
                  format(": %.1f warps a scheduler, occupancy %s%s", m.warps_per_scheduler,
                         known(m.occupancy_pct) ? pct(m.occupancy_pct).c_str() : "-", cap.c_str()) +
                  stall};
    }
    const std::string warps =
        known(m.warps_per_scheduler) ? format(" with %.1f warps a scheduler", m.warps_per_scheduler) : "";
    return {NcuRule::LatencyStalls, head + warps + (stall.empty() ? "" : stall)};
  }
  return {NcuRule::NoSingleLimit, "no single limit: compute " + (known(C) ? pct(C) : std::string("-")) + ", memory " +
                                      (known(Mem) ? pct(Mem) : std::string("-")) + " of peak, neither at its roof (" +
                                      pct(t.at_limit_pct) + ")"};
}

namespace {

// The domain --domain names, as an index into the report's strings (-1: any); throws when no
// kernel ran inside a range of it.
int domain_index(const NcuReport& r, const std::string& domain) {
  if (domain.empty()) return -1;
  std::set<std::string> seen;
  int index = -1;
  for (const NcuKernel& k : r.kernels)
    for (const NcuRange& g : k.ranges()) {
      seen.insert(r.str(g.domain));
      if (r.str(g.domain) == domain) index = g.domain;
    }
  if (index >= 0) return index;
  std::string list;
  for (const std::string& s : seen) list += (list.empty() ? "" : ", ") + s;
  throw TraceError("no kernel of " + r.source + " ran inside a range of NVTX domain '" + escape_name(domain) + "'" +
                   (seen.empty() ? ": it has no NVTX ranges at all." : "; its domains: " + escape_name(list) + "."));
}

// The layers in order of first appearance, with what each one's numbers are summed from.
struct Grouping {
  std::map<std::string, size_t> index;
  std::unordered_map<int, std::string> short_names;  // by kernel name (NcuReport::strings), made once
  std::vector<Acc> acc;
  std::set<std::string> measured;  // exact ranges that are some kernel's innermost
  Total dram;
};

// Kernel `ki` into its layer.
void add_kernel(const NcuReport& r, size_t ki, int domain, LayerKey by, NcuLayers& out, Grouping& g) {
  const NcuKernel& k = r.kernels[ki];
  const int inner = innermost(r, k, domain);
  const std::string exact = inner < 0 ? "(no range)" : r.str(k.ranges()[static_cast<size_t>(inner)].name);
  const std::string key = by == LayerKey::Folded && inner >= 0 ? fold_block_indices(exact) : exact;
  auto [it, fresh] = g.index.try_emplace(key, out.layers.size());
  if (fresh) {
    out.layers.emplace_back();
    out.layers.back().name = key;
    g.acc.emplace_back();
    g.acc.back().stall_cycles.assign(r.stall_names.size(), 0);
    g.acc.back().stall_inst.assign(r.stall_names.size(), 0);
  }
  NcuLayer& l = out.layers[it->second];
  Acc& a = g.acc[it->second];
  if (inner >= 0) {
    g.measured.insert(exact);
    a.domains.insert(r.str(k.ranges()[static_cast<size_t>(inner)].domain));
  }
  if (a.ranges.insert(exact).second) l.ranges.push_back(exact);
  const double time = k.at(M::Time), bytes = dram_bytes(k);
  ++l.kernels;
  l.time_ns += time;
  a.dram.add(bytes);
  g.dram.add(bytes);
  a.flops.add(counted_flops(k));
  a.dram_pct.add(k.at(M::DramPct), time);
  a.memory_pct.add(k.at(M::MemoryPct), time);
  a.compute_pct.add(k.at(M::ComputePct), time);
  a.tensor_pct.add(k.at(M::TensorPct), time);
  a.occupancy.add(k.at(M::OccupancyPct), time);
  a.theoretical.add(k.at(M::TheoreticalOccupancyPct), time);
  a.warps.add(r.schedulers > 0 ? k.at(M::WarpsActive) / r.schedulers : kNaN, time);
  for (size_t s = 0; s < r.stall_names.size(); ++s)
    if (known(k.stall(s)) && k.has(M::InstExecuted)) {
      a.stall_cycles[s] += k.stall(s) * k.at(M::InstExecuted);
      a.stall_inst[s] += k.at(M::InstExecuted);
    }
  if (a.longest == SIZE_MAX || time > r.kernels[a.longest].at(M::Time)) a.longest = ki;
  auto [short_name, fresh_name] = g.short_names.try_emplace(k.name);
  if (fresh_name) short_name->second = ncu_short_name(r.str(k.name));
  auto [named, new_in_layer] =
      a.kernel_names.try_emplace(short_name->second, static_cast<uint32_t>(l.kernel_names.size()));
  if (new_in_layer) l.kernel_names.push_back(short_name->second);
  l.rows.push_back({k.id, named->second, time, bytes});
  ++out.kernels;
  out.time_ns += time;
  if (!known(out.dram_peak_gbps) && k.has(M::DramPeakBytesPerCycle) && k.has(M::DramCyclesPerSecond))
    out.dram_peak_gbps = k.at(M::DramPeakBytesPerCycle) * k.at(M::DramCyclesPerSecond) / 1e9;
}

// A layer's sums, means and launch figures from what add_kernel gathered.
void finish_layer(const NcuReport& r, const Acc& a, double report_time, NcuLayer& l, std::vector<std::string>& notes) {
  l.domain = a.domains.size() == 1 ? *a.domains.begin() : "";
  l.share = report_time > 0 ? l.time_ns / report_time : 0;
  l.dram_bytes = a.dram.value();
  if (known(l.dram_bytes) && l.time_ns > 0) l.dram_gbps = l.dram_bytes / l.time_ns;
  l.counted_flops = a.flops.value();
  if (known(l.counted_flops) && l.time_ns > 0) l.counted_gflops = l.counted_flops / l.time_ns;
  l.m.dram_pct = a.dram_pct.mean();
  l.m.memory_pct = a.memory_pct.mean();
  l.m.compute_pct = a.compute_pct.mean();
  l.m.tensor_pct = a.tensor_pct.mean();
  l.m.occupancy_pct = a.occupancy.mean();
  l.m.theoretical_pct = a.theoretical.mean();
  l.m.warps_per_scheduler = a.warps.mean();
  for (size_t s = 0; s < r.stall_names.size(); ++s)
    if (a.stall_inst[s] > 0 && r.stall_names[s] != "selected")
      l.m.stalls.push_back({r.stall_names[s], a.stall_cycles[s] / a.stall_inst[s]});
  std::stable_sort(l.m.stalls.begin(), l.m.stalls.end(),
                   [](const NcuStall& x, const NcuStall& y) { return x.cycles > y.cycles; });
  const NcuKernel& longest = r.kernels[a.longest];
  l.longest = ncu_short_name(r.str(longest.name));
  finish_launch(r, longest, l.m);
  l.m.kernels = l.kernels;
  if (a.dram.missing)
    notes.push_back(l.name + ": " + std::to_string(a.dram.missing) +
                    " of its kernels have no DRAM bytes; its DRAM sum is left out.");
}

}  // namespace

namespace {

// "1592 (laptime), 1600 (python)": the first few processes of a report.
std::string process_list(const NcuReport& r) {
  std::string list;
  size_t shown = 0;
  for (const auto& [pid, name] : r.processes) {
    if (shown++ == 6) break;
    list += (list.empty() ? "" : ", ") + std::to_string(pid) + (name.empty() ? "" : " (" + escape_name(name) + ")");
  }
  if (r.processes.size() > 6) list += " and " + std::to_string(r.processes.size() - 6) + " more";
  return list;
}

// The process whose kernels are read: --pid, else the only one (checked: one sentence otherwise).
uint32_t chosen_process(const NcuReport& r, const NcuLayerOptions& o) {
  if (o.pid) {
    if (!r.processes.count(*o.pid))
      throw TraceError(r.source + " has no kernel of process " + std::to_string(*o.pid) +
                       "; its processes: " + process_list(r) + ".");
    return *o.pid;
  }
  if (r.processes.size() > 1)
    throw TraceError(r.source + " holds the kernels of " + std::to_string(r.processes.size()) + " processes, " +
                     process_list(r) + ": each is a run of its own; name one with --pid N.");
  return r.processes.empty() ? 0 : r.processes.begin()->first;
}

// laptime's own ranges, else ATen's kernels or emit_nvtx's ranges (trace/analyses/program.h).
Program report_program(const NcuReport& r) {
  std::vector<char> looked(r.strings.size(), 0);
  bool torch = false;
  for (const NcuKernel& k : r.kernels) {
    for (const NcuRange& x : k.ranges()) {
      if (x.domain >= 0 && r.str(x.domain) == "laptime") return Program::Laptime;
      torch = torch || (x.name >= 0 && is_emit_nvtx_range(r.str(x.name)));
    }
    if (k.name >= 0 && !looked[static_cast<size_t>(k.name)]) {
      looked[static_cast<size_t>(k.name)] = 1;
      torch = torch || is_aten_kernel(r.str(k.name));
    }
  }
  return torch ? Program::PyTorch : Program::Other;
}

}  // namespace

NcuLayers ncu_layers(const NcuReport& r, const NcuLayerOptions& o, const LayerCosts* costs, const Ceilings* ceilings,
                     const NcuThresholds& t) {
  const uint32_t pid = chosen_process(r, o);
  NcuLayers out;
  out.source = r.source;
  out.converted_by = r.converted_by;
  out.gpu = r.gpu;
  out.sm_count = r.sm_count;
  out.by = o.by;
  out.domain = resolve_domain(o.domain);
  out.notes = r.notes;
  out.program = report_program(r);
  const int domain = domain_index(r, out.domain);
  Grouping g;
  if (const auto p = r.processes.find(pid); p != r.processes.end()) out.process = p->second;
  for (size_t ki = 0; ki < r.kernels.size(); ++ki)
    if (r.kernels[ki].pid == pid) add_kernel(r, ki, domain, o.by, out, g);
  out.dram_bytes = g.dram.value();
  for (size_t i = 0; i < out.layers.size(); ++i) finish_layer(r, g.acc[i], out.time_ns, out.layers[i], out.notes);
  if (costs) {
    out.costs = *costs;
    join_costs(*costs, ceilings, g.measured, out.layers, out.notes);
  }
  if (ceilings) out.ceilings = *ceilings;
  for (NcuLayer& l : out.layers) l.diagnosis = diagnose(l.m, t);
  std::stable_sort(out.layers.begin(), out.layers.end(),
                   [](const NcuLayer& x, const NcuLayer& y) { return x.time_ns > y.time_ns; });
  return out;
}

}  // namespace laptime::trace
