// The writers of `laptime kernels REPORT`: text, JSON and the measured roofline. They only read
// an NcuLayers (trace/ncu/ncu_layers.h), so the three cannot disagree.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "trace/ncu/ncu_layers.h"
#include "trace/analyses/roofline.h"
#include "trace/write/roofline_svg.h"
#include "trace/model/text.h"
#include "trace/model/format.h"

namespace laptime::trace {
namespace {

using detail::format;

bool known(double v) { return !std::isnan(v); }
std::string num(const char* f, double v) { return known(v) ? format(f, v) : "-"; }
nlohmann::json value(double v) { return known(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// A name for a table cell: escaped, and at most `width` columns.
std::string cell(const std::string& s, size_t width) {
  const std::string e = escape_name(s);
  if (detail::display_width(e) <= width) return e;
  return utf8_prefix(e, width - 3) + "...";
}

std::string grouping(const NcuLayers& l) {
  return std::string("innermost NVTX range, ") +
         (l.by == LayerKey::Folded ? "block indices folded (--by block keeps them)"
                                   : "block indices kept (--by block)") +
         ", " + (l.domain.empty() ? "any domain" : "domain " + escape_name(l.domain));
}

std::string stalls_text(const NcuLayerMetrics& m, size_t n) {
  std::string s;
  for (size_t i = 0; i < m.stalls.size() && i < n; ++i)
    s += (i ? ", " : "") + m.stalls[i].reason + format(" %.1f", m.stalls[i].cycles);
  return s.empty() ? "-" : s;
}

std::string occupancy_text(const NcuLayerMetrics& m) {
  return num("%.0f%%", m.occupancy_pct) + " / " + num("%.0f%%", m.theoretical_pct);
}

std::string limiter_text(const NcuLayerMetrics& m) {
  if (m.limiters.empty()) return known(m.theoretical_pct) ? "-" : "?";
  std::string s;
  for (size_t i = 0; i < m.limiters.size(); ++i) s += (i ? ", " : "") + m.limiters[i];
  return s;
}

// What the moved/must columns and the roofline need, said to whoever made the report.
std::string missing_costs(Program p) {
  switch (p) {
    case Program::Laptime:
      return "`laptime bench ... --json RUN.json` writes RUN.layers.json beside it; pass --layers FILE (moved/must "
             "and the roofline need it).";
    case Program::PyTorch:
      return "moved/must and the roofline need each layer's FLOPs and the bytes it must move (weights, inputs, "
             "outputs), keyed by the NVTX range names: write them as a laptime.layers/1 file (docs/PROFILING.md "
             "11.1; torch.utils.flop_counter.FlopCounterMode counts a module's FLOPs, the nbytes of its parameters, "
             "inputs and outputs its bytes) and pass --layers FILE.";
    case Program::Other:
      break;
  }
  return "moved/must and the roofline need each layer's FLOPs and the bytes it must move, keyed by the NVTX range "
         "names: write them as a laptime.layers/1 file (docs/PROFILING.md 11.1) and pass --layers FILE.";
}

void print_header(const NcuLayers& l, std::FILE* out) {
  std::fprintf(out, "  report     %s on %s%s, %.3f ms of GPU time, %s from DRAM\n",
               detail::plural(l.kernels, "kernel", "kernels").c_str(),
               l.gpu.empty() ? "an unnamed GPU" : escape_name(l.gpu).c_str(),
               l.sm_count > 0 ? format(" (%d SMs)", l.sm_count).c_str() : "", l.time_ns / 1e6,
               known(l.dram_bytes) ? format("%.1f MB", l.dram_bytes / 1e6).c_str() : "- MB");
  if (!l.converted_by.empty())
    std::fprintf(out, "             converted by `%s`\n", escape_name(l.converted_by).c_str());
  std::fprintf(out,
               "  time       ncu replays each kernel alone (caches flushed, clocks locked): per kernel, not the lap\n");
  std::fprintf(out, "  layers     %s\n", grouping(l).c_str());
  if (l.costs)
    std::fprintf(out, "  costs      %s: %s %s %s (bytes each layer must move, FLOPs)\n",
                 escape_name(l.costs->source).c_str(), escape_name(l.costs->model).c_str(),
                 escape_name(l.costs->precision).c_str(), escape_name(l.costs->shape).c_str());
  else
    std::fprintf(out, "  costs      none: %s\n", missing_costs(l.program).c_str());
  if (l.ceilings) {
    // fp8's rate where the file has one: an fp8 layer's % of bound is against it.
    const std::string fp8 = l.ceilings->fp8_tflops > 0 ? format("fp8 %.1f, ", l.ceilings->fp8_tflops) : "";
    std::fprintf(out, "  ceilings   %s: %sbf16 %.1f, tf32 %.1f, fp32 %.1f TFLOP/s, device copy %.0f GB/s (%s)\n",
                 escape_name(l.ceilings->gpu).c_str(), fp8.c_str(), l.ceilings->bf16_tflops, l.ceilings->tf32_tflops,
                 l.ceilings->fp32_tflops, l.ceilings->copy_gbps, escape_name(l.ceilings->source).c_str());
  }
  for (const std::string& n : l.notes) {
    std::fprintf(out, "  note\n");
    detail::print_wrapped(out, escape_name(n), 4);
  }
}

void print_throughput(const NcuLayers& l, std::FILE* out) {
  std::fprintf(out, "\nThroughput (speed of light: %% of the device's peak; DRAM peak %s GB/s)\n",
               num("%.0f", l.dram_peak_gbps).c_str());
  std::vector<std::vector<std::string>> rows{{"layer", "kernels", "time (us)", "share", "DRAM (MB)", "GB/s", "DRAM %",
                                              "memory %", "compute %", "tensor %", "FP32/64 GFLOP/s"}};
  for (const NcuLayer& x : l.layers)
    rows.push_back({cell(x.name, 32), std::to_string(x.kernels), format("%.1f", x.time_ns / 1e3),
                    format("%.1f%%", 100 * x.share), num("%.2f", x.dram_bytes / 1e6), num("%.0f", x.dram_gbps),
                    num("%.1f", x.m.dram_pct), num("%.1f", x.m.memory_pct), num("%.1f", x.m.compute_pct),
                    num("%.1f", x.m.tensor_pct), num("%.1f", x.counted_gflops)});
  detail::print_table(out, rows, "lrrrrrrrrrr", 2);
}

void print_costs(const NcuLayers& l, std::FILE* out) {
  if (!l.costs) return;
  std::fprintf(out,
               "\nAgainst what each layer must move (moved: the DRAM bytes ncu measured; must: %s; must read: "
               "its weights and inputs, since a kernel's writes may still sit in L2 when it ends)\n",
               escape_name(l.costs->source).c_str());
  std::vector<std::vector<std::string>> rows{{"layer", "must (MB)", "must read", "moved (MB)", "moved/must",
                                              "moved/read", "GFLOP", "FLOP/B", "TFLOP/s", "bound", "% of bound"}};
  for (const NcuLayer& x : l.layers) {
    if (!x.has_costs) continue;
    const RooflinePoint& p = x.measured;
    const bool point = known(x.dram_bytes);
    rows.push_back({cell(x.name, 32), format("%.2f", x.must_bytes / 1e6), format("%.2f", x.must_read / 1e6),
                    num("%.2f", x.dram_bytes / 1e6), num("%.2fx", x.m.bytes_ratio), num("%.2fx", x.read_ratio),
                    format("%.3f", x.must_flops / 1e9), point ? format("%.1f", p.intensity) : "-",
                    point ? format("%.1f", p.tflops) : "-", point && p.has_bound ? roof_bound_name(p.bound) : "-",
                    point && p.has_bound ? format("%.1f", p.pct_of_bound) : "-"});
  }
  detail::print_table(out, rows, "lrrrrrrrrlr", 2);
}

void print_launch(const NcuLayers& l, std::FILE* out) {
  std::fprintf(out, "\nOccupancy and launch (each layer's longest kernel; occupancy achieved / theoretical)\n");
  std::vector<std::vector<std::string>> rows{{"layer", "kernel", "grid x block", "regs", "smem (KiB)", "waves",
                                              "occupancy", "limited by", "warps/sched",
                                              "top stalls (cycles an instr.)"}};
  for (const NcuLayer& x : l.layers) {
    const NcuLayerMetrics& m = x.m;
    rows.push_back({cell(x.name, 32), cell(x.longest, 40), num("%.0f", m.grid) + " x " + num("%.0f", m.block),
                    num("%.0f", m.registers), num("%.1f", m.shared_bytes / 1024), num("%.2f", m.waves),
                    occupancy_text(m), limiter_text(m), num("%.1f", m.warps_per_scheduler), stalls_text(m, 3)});
  }
  detail::print_table(out, rows, "llrrrrllrl", 2);
}

}  // namespace

void print_ncu_layers(const NcuLayers& l, std::FILE* out) {
  print_header(l, out);
  print_throughput(l, out);
  print_costs(l, out);
  print_launch(l, out);
  std::fprintf(out, "\nDiagnosis (the first rule that applies; rules and thresholds: docs/PROFILING.md 13.4)\n");
  for (const NcuLayer& x : l.layers) {
    std::fprintf(out, "  %s  [%s]\n", escape_name(x.name).c_str(), ncu_rule_name(x.diagnosis.rule));
    detail::print_wrapped(out, x.diagnosis.text, 4);
  }
}

namespace {

nlohmann::json kernel_row(const NcuLayer& x, const NcuLayerKernel& k) {
  return {{"id", k.id}, {"name", x.kernel_names[k.name]}, {"time_ns", k.time_ns}, {"dram_bytes", value(k.dram_bytes)}};
}

}  // namespace

DeferredKernelLists::DeferredKernelLists()
    : prefix_("@@laptime-kernel-list-" + std::to_string(reinterpret_cast<uintptr_t>(this)) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-") {}

nlohmann::json DeferredKernelLists::marker(const NcuLayer& x) {
  layers_.push_back(&x);
  return prefix_ + std::to_string(layers_.size() - 1) + "@@";
}

std::string DeferredKernelLists::text(nlohmann::json j) const {
  escape_json_strings(j);
  const std::string tree = j.dump(2);
  std::string out;
  out.reserve(tree.size());
  size_t from = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const std::string mark = "\"" + prefix_ + std::to_string(i) + "@@\"";
    const size_t at = tree.find(mark, from);
    if (at == std::string::npos) continue;
    const size_t line = tree.rfind('\n', at) + 1;
    const std::string indent(tree.find_first_not_of(' ', line) - line, ' ');
    out.append(tree, from, at - from);
    const NcuLayer& x = *layers_[i];
    if (x.rows.empty()) {
      out += "[]";
    } else {
      out += "[";
      for (size_t k = 0; k < x.rows.size(); ++k) {  // one row at a time, as dump(2) lays it out
        nlohmann::json row = kernel_row(x, x.rows[k]);
        escape_json_strings(row);
        std::string r = row.dump(2);
        std::string shifted = "\n" + indent + "  ";
        for (char c : r) shifted += c == '\n' ? "\n" + indent + "  " : std::string(1, c);
        out += shifted + (k + 1 < x.rows.size() ? "," : "");
      }
      out += "\n" + indent + "]";
    }
    from = at + mark.size();
  }
  out.append(tree, from, std::string::npos);
  return out;
}

nlohmann::json ncu_layer_to_json(const NcuLayer& x) { return ncu_layer_to_json(x, nullptr); }

nlohmann::json ncu_layer_to_json(const NcuLayer& x, DeferredKernelLists* deferred) {
  const NcuLayerMetrics& m = x.m;
  nlohmann::json s = nlohmann::json::array();
  for (const NcuStall& st : m.stalls) s.push_back({{"reason", st.reason}, {"cycles_per_instruction", st.cycles}});
  nlohmann::json kernels = nlohmann::json::array();
  if (deferred)
    kernels = deferred->marker(x);
  else
    for (const NcuLayerKernel& k : x.rows) kernels.push_back(kernel_row(x, k));
  nlohmann::json row{{"name", x.name},
                     {"domain", x.domain},
                     {"ranges", x.ranges},
                     {"kernels", x.kernels},
                     {"time_ns", x.time_ns},
                     {"share", x.share},
                     {"dram_bytes", value(x.dram_bytes)},
                     {"dram_gbps", value(x.dram_gbps)},
                     {"counted_flops", value(x.counted_flops)},
                     {"speed_of_light",
                      {{"dram_pct", value(m.dram_pct)},
                       {"memory_pct", value(m.memory_pct)},
                       {"compute_pct", value(m.compute_pct)},
                       {"tensor_pct", value(m.tensor_pct)}}},
                     {"occupancy",
                      {{"achieved_pct", value(m.occupancy_pct)},
                       {"theoretical_pct", value(m.theoretical_pct)},
                       {"warps_per_scheduler", value(m.warps_per_scheduler)},
                       {"blocks_per_sm", value(m.blocks_per_sm)},
                       {"limited_by", m.limiters}}},
                     {"launch",
                      {{"kernel", x.longest},
                       {"grid", value(m.grid)},
                       {"block", value(m.block)},
                       {"registers", value(m.registers)},
                       {"shared_bytes", value(m.shared_bytes)},
                       {"waves", value(m.waves)}}},
                     {"stalls", s},
                     {"kernel_names", x.kernel_names},
                     {"kernel_list", kernels},
                     {"diagnosis", {{"rule", ncu_rule_name(x.diagnosis.rule)}, {"text", x.diagnosis.text}}}};
  if (x.has_costs) {
    const RooflinePoint& p = x.measured;
    row["costs"] = {{"must_flops", x.must_flops},          {"must_bytes", x.must_bytes},
                    {"must_read_bytes", x.must_read},      {"precision", x.precision},
                    {"bytes_ratio", value(m.bytes_ratio)}, {"read_ratio", value(x.read_ratio)}};
    if (known(x.dram_bytes)) {
      row["costs"]["measured"] = {{"intensity_flop_per_byte", p.intensity}, {"tflops", p.tflops}, {"gbps", p.gbps}};
      if (p.has_bound) {
        row["costs"]["measured"]["bound"] = roof_bound_name(p.bound);
        row["costs"]["measured"]["pct_of_bound"] = p.pct_of_bound;
      }
    }
  }
  return row;
}

nlohmann::json ncu_layers_to_json(const NcuLayers& l) { return ncu_layers_to_json(l, nullptr); }

nlohmann::json ncu_layers_to_json(const NcuLayers& l, DeferredKernelLists* deferred) {
  const NcuThresholds t;
  nlohmann::json j{{"schema", "laptime.kernels/1"},
                   {"source", l.source},
                   {"gpu", l.gpu},
                   {"program", program_name(l.program)},
                   {"sm_count", l.sm_count},
                   {"grouping", {{"by", l.by == LayerKey::Folded ? "layer" : "block"}, {"domain", l.domain}}},
                   {"time", "ncu's per-kernel duration: each kernel replayed alone, caches flushed, clocks locked"},
                   {"kernels", l.kernels},
                   {"time_ns", l.time_ns},
                   {"dram_bytes", value(l.dram_bytes)},
                   {"dram_peak_gbps", value(l.dram_peak_gbps)},
                   {"thresholds",
                    {{"at_limit_pct", t.at_limit_pct},
                     {"latency_pct", t.latency_pct},
                     {"excess_bytes_ratio", t.excess_bytes},
                     {"small_grid_waves", t.small_grid_waves},
                     {"few_warps_per_scheduler", t.few_warps}}},
                   {"notes", l.notes},
                   {"layers", nlohmann::json::array()}};
  if (!l.converted_by.empty()) j["converted_by"] = l.converted_by;
  if (l.costs)
    j["layer_costs"] = {{"source", l.costs->source},
                        {"model", l.costs->model},
                        {"precision", l.costs->precision},
                        {"shape", l.costs->shape}};
  if (l.ceilings) {
    j["ceilings"] = ceilings_to_json(*l.ceilings);
    j["ceilings"]["source"] = l.ceilings->source;
  }
  for (const NcuLayer& x : l.layers) j["layers"].push_back(ncu_layer_to_json(x, deferred));
  return j;
}

void write_ncu_roofline_svg(const NcuLayers& l, const std::string& path) {
  if (!l.costs)
    throw TraceError("the roofline plot needs the layer costs: " +
                     (l.program == Program::Laptime ? std::string("pass --layers RUN.layers.json (`laptime bench ... "
                                                                  "--json RUN.json` writes it).")
                                                    : missing_costs(l.program)));
  if (!l.ceilings)
    throw TraceError("the roofline plot needs the device's ceilings: run `laptime peak`, or pass --peak FILE.");
  const Ceilings& c = *l.ceilings;
  const std::string& precision = l.costs->precision;
  RoofPlot plot;
  plot.peak_tflops = c.tflops(precision);
  plot.copy_gbps = c.copy_gbps;
  plot.ridge = plot.peak_tflops * 1e3 / plot.copy_gbps;
  plot.title = "Roofline per layer, traffic measured by Nsight Compute: " + l.costs->model + " " + precision + " " +
               l.costs->shape + " on " + c.gpu;
  plot.subtitle = "filled: the DRAM bytes ncu measured; hollow: the bytes the layer must move (" + l.costs->source +
                  "); time: ncu's per-kernel duration, clocks locked";
  plot.roof_label = precision + " " + format("%.0f", plot.peak_tflops) + " TFLOP/s";
  plot.listed_heading = "Not drawn, 0 FLOPs counted (memory-bound; moved/must, achieved GB/s):";
  for (const NcuLayer& x : l.layers) {
    if (!x.has_costs || !known(x.dram_bytes) || x.time_ns <= 0) continue;
    const RooflinePoint& p = x.measured;
    if (!(x.must_flops > 0) || !(x.dram_bytes > 0)) {
      plot.listed.push_back(x.name + ": " + num("%.2fx", x.m.bytes_ratio) + ", " + format("%.0f", p.gbps) + " GB/s");
      continue;
    }
    RoofPlotPoint q;
    q.label = x.name + " " + (p.has_bound ? format("%.0f%%", p.pct_of_bound) : "");
    q.tooltip = x.name + ": " + format("%.1f", p.intensity) + " FLOP/B measured (" +
                format("%.1f", x.must_flops / x.must_bytes) + " assumed), " + format("%.1f", p.tflops) + " TFLOP/s, " +
                num("%.2fx", x.m.bytes_ratio) + " the bytes it must move, " + roof_bound_name(p.bound) + "-bound, " +
                format("%.1f", p.pct_of_bound) + "% of the bound";
    q.intensity = p.intensity;
    q.tflops = p.tflops;
    q.compute = p.bound == RoofBound::Compute;
    plot.points.push_back(q);
    if (x.must_bytes > 0) {
      RoofPlotPoint a = q;
      a.hollow = true;
      a.joined_to = static_cast<int>(plot.points.size()) - 1;
      a.intensity = x.must_flops / x.must_bytes;
      a.tooltip = x.name + ": " + format("%.1f", a.intensity) + " FLOP/B if it moved only what it must";
      plot.points.push_back(a);
    }
  }
  if (plot.points.empty() && plot.listed.empty())
    throw TraceError("no layer of " + l.source + " has both layer costs and DRAM bytes to draw.");
  write_output(path, "roofline SVG", roofline_plot_svg(plot));
}

}  // namespace laptime::trace
