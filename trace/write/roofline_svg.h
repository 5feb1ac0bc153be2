// The roofline plot, drawn once for every view that has points to put on it: analyze's
// per-layer roofline (trace/analyses/roofline.h, the sidecar's assumed traffic) and `laptime kernels`
// (trace/ncu/ncu_layers.h, the traffic Nsight Compute measured, beside the assumed one).
//
// Log-log: arithmetic intensity (FLOP per byte) across, achieved TFLOP/s up; the roof is the
// bandwidth slope up to the ridge, then flat at the compute ceiling. Each point is a circle,
// blue when compute-bound and red when memory-bound, with a hover tooltip; filled points get a
// label at the first free spot around them (right, left, above, below, then further up or
// down with a leader line), hollow ones (an assumed position) are joined by a dashed line to
// the point they belong to. Lines listed under the plot carry what cannot sit on a log axis.
#pragma once

#include <string>
#include <vector>

namespace laptime::trace {

struct RoofPlotPoint {
  std::string label;                 // beside the point (filled points only)
  std::string tooltip;               // on hover
  double intensity = 0, tflops = 0;  // both > 0
  bool compute = false;              // compute-bound (blue) or memory-bound (red)
  bool hollow = false;               // an assumed position: no label, joined to `joined_to`
  int joined_to = -1;                // index of the filled point a hollow one belongs to
};

struct RoofPlot {
  std::string title, subtitle;
  std::string roof_label;  // at the compute roof ("bf16 800 TFLOP/s")
  double peak_tflops = 0, copy_gbps = 0, ridge = 0;
  std::vector<RoofPlotPoint> points;
  std::string listed_heading;       // above the lines under the plot
  std::vector<std::string> listed;  // one line each, in red
};

// The SVG document.
std::string roofline_plot_svg(const RoofPlot& p);

}  // namespace laptime::trace
