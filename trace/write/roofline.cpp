#include "trace/write/roofline.h"

#include <nlohmann/json.hpp>

#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/write/roofline_svg.h"

namespace laptime::trace {
void print_roofline(const Roofline& r, std::FILE* out) {
  std::fprintf(out, "\nRoofline per layer (%s, %s %s %s)\n", r.costs.source.c_str(), r.costs.model.c_str(),
               r.costs.precision.c_str(), r.costs.shape.c_str());
  if (r.layers.empty()) {
    for (const std::string& n : r.notes) std::fprintf(out, "  none      %s\n", n.c_str());
    return;
  }
  if (r.ceilings)
    std::fprintf(out, "  ceilings  %s: %s GEMM %.1f TFLOP/s, device copy %.0f GB/s, ridge %.1f FLOP/byte (%s%s%s)\n",
                 r.ceilings->gpu.c_str(), r.costs.precision.c_str(), r.peak_tflops, r.peak_gbps, r.ridge,
                 r.ceilings->source.c_str(), r.ceilings->measured.empty() ? "" : ", ", r.ceilings->measured.c_str());
  else
    std::fprintf(out, "  ceilings  none: run `laptime peak` on this GPU, or pass --peak FILE (achieved rates only)\n");
  std::fprintf(out, "  time      GPU time of the kernels launched inside each range, per steady iteration (mean)\n");
  for (const std::string& n : r.notes) std::fprintf(out, "  note      %s\n", n.c_str());
  std::fprintf(out, "\n  %-22s %4s %9s %9s %8s %10s %8s %8s %-8s %7s\n", "layer", "x", "GFLOP", "MB", "FLOP/B",
               "time (us)", "TFLOP/s", "GB/s", "bound", "% bound");
  for (const RooflineRow& row : r.folded) {
    const RooflinePoint& p = row.point;
    std::fprintf(out, "  %-22s %4zu %9.3f %9.2f %8.1f %10.1f %8.1f %8.0f %-8s %7s\n", row.name.c_str(), row.instances,
                 row.flops / 1e9, row.bytes / 1e6, p.intensity, row.time_ns / 1e3, p.tflops, p.gbps,
                 p.has_bound ? roof_bound_name(p.bound) : "-",
                 p.has_bound ? detail::format("%.1f", p.pct_of_bound).c_str() : "-");
  }
}

namespace {
nlohmann::json row_json(const RooflineRow& row) {
  const RooflinePoint& p = row.point;
  nlohmann::json j{{"name", row.name},
                   {"kind", row.kind},
                   {"instances", row.instances},
                   {"flops", row.flops},
                   {"bytes", row.bytes},
                   {"time_ns", row.time_ns},
                   {"intensity_flop_per_byte", p.intensity},
                   {"tflops", p.tflops},
                   {"gbps", p.gbps},
                   {"precision", row.precision}};
  if (p.has_bound) {
    j["bound"] = roof_bound_name(p.bound);
    j["attainable_tflops"] = p.attainable_tflops;
    j["pct_of_bound"] = p.pct_of_bound;
  }
  return j;
}
}  // namespace

nlohmann::json roofline_to_json(const Roofline& r) {
  nlohmann::json j{{"layer_costs", r.costs.source},
                   {"model", r.costs.model},
                   {"precision", r.costs.precision},
                   {"shape", r.costs.shape},
                   {"time", "GPU time of the kernels launched inside each range, per steady iteration (mean)"},
                   {"notes", r.notes},
                   {"layers", nlohmann::json::array()},
                   {"folded", nlohmann::json::array()}};
  if (r.ceilings) {
    j["ceilings"] = ceilings_to_json(*r.ceilings);
    j["ceilings"]["source"] = r.ceilings->source;
    j["peak_tflops"] = r.peak_tflops;
    j["peak_gbps"] = r.peak_gbps;
    j["ridge_flop_per_byte"] = r.ridge;
  }
  for (const RooflineRow& row : r.layers) j["layers"].push_back(row_json(row));
  for (const RooflineRow& row : r.folded) j["folded"].push_back(row_json(row));
  return j;
}

void check_roofline_svg(const Roofline& r) {
  if (r.layers.empty()) throw TraceError("no layer to draw in the roofline plot: " + r.notes.front());
  if (!r.ceilings) throw TraceError(kRooflineNeedsCeilings);
}

void write_roofline_svg(const Roofline& r, const std::string& path) {
  check_roofline_svg(r);
  const double peak = r.peak_tflops, bw = r.peak_gbps, ridge = r.ridge;
  RoofPlot plot;
  plot.title =
      "Roofline per layer: " + r.costs.model + " " + r.costs.precision + " " + r.costs.shape + " on " + r.ceilings->gpu;
  plot.subtitle = r.costs.precision + " GEMM " + detail::format("%.1f", peak) + " TFLOP/s, device copy " +
                  detail::format("%.0f", bw) + " GB/s, ridge " + detail::format("%.1f", ridge) +
                  " FLOP/byte (laptime peak); time per layer: mean over steady "
                  "iterations";
  plot.roof_label = r.costs.precision + " " + detail::format("%.0f", peak) + " TFLOP/s";
  plot.peak_tflops = peak;
  plot.copy_gbps = bw;
  plot.ridge = ridge;
  plot.listed_heading = "Not drawn, 0 FLOPs counted (memory-bound; % of the copy bandwidth):";
  for (const RooflineRow& row : r.folded) {
    const RooflinePoint& p = row.point;
    const std::string times = row.instances > 1 ? " x" + std::to_string(row.instances) : "";
    if (!(row.flops > 0 && row.time_ns > 0)) {
      plot.listed.push_back(row.name + times + ": " + detail::format("%.0f", p.gbps) + " GB/s, " +
                            detail::format("%.1f", p.pct_of_bound) + "%");
      continue;
    }
    RoofPlotPoint q;
    q.label = row.name + times + " " + detail::format("%.0f%%", p.pct_of_bound);
    q.tooltip = row.name + ": " + detail::format("%.1f", p.intensity) + " FLOP/B, " + detail::format("%.1f", p.tflops) +
                " TFLOP/s, " + detail::format("%.0f", p.gbps) + " GB/s, " + roof_bound_name(p.bound) + "-bound, " +
                detail::format("%.1f", p.pct_of_bound) + "% of the bound";
    q.intensity = p.intensity;
    q.tflops = p.tflops;
    q.compute = p.bound == RoofBound::Compute;
    plot.points.push_back(std::move(q));
  }
  // A temporary beside the target, renamed when complete; every write checked (core/output_file.h).
  write_output(path, "roofline SVG", roofline_plot_svg(plot));
}

}  // namespace laptime::trace
