#include "trace/write/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trace/model/error.h"
#include "trace/model/text.h"

namespace laptime::trace {

const char* category_color(Category c) {
  switch (c) {  // Tableau 10: distinct in colour and in grey
    case Category::Gemm:
      return "#4e79a7";
    case Category::Convolution:
      return "#59a14f";
    case Category::Attention:
      return "#b07aa1";
    case Category::Normalization:
      return "#edc948";
    case Category::Elementwise:
      return "#76b7b2";
    case Category::ReductionPooling:
      return "#ff9da7";
    case Category::MemcpyMemset:
      return "#9c755f";
    case Category::Other:
      return "#bab0ac";
  }
  return "#bab0ac";
}

namespace {

std::string escape(const std::string& s) { return xml_escape(s); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string duration(Ns ns) {
  char buf[32];
  if (ns >= 1000000)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  return buf;
}

// 1, 2 or 5 times a power of ten: about ten ticks across the window.
double tick_step_ms(double span_ms) {
  const double raw = span_ms / 10, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

constexpr double kWidth = 1600, kLeft = 180, kRight = 20, kRow = 18, kLaneGap = 8;
constexpr double kCharWidth = 6.2;  // 11px sans-serif, roughly

class Svg {
 public:
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip,
            const std::string& label = "", double opacity = 1.0) {
    w = std::max(w, 0.6);  // a kernel of a few microseconds still shows
    out_ << "<g><title>" << escape(tooltip) << "</title><rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\""
         << num(w) << "\" height=\"" << num(h) << "\" fill=\"" << fill << "\"";
    if (opacity < 1) out_ << " fill-opacity=\"" << num(opacity) << "\"";
    out_ << "/>";
    const size_t fits = static_cast<size_t>((w - 4) / kCharWidth);
    if (!label.empty() && fits >= 3) {
      const std::string shown = label.size() <= fits ? label : utf8_prefix(label, fits - 1) + "~";
      out_ << "<text x=\"" << num(x + 2) << "\" y=\"" << num(y + h - 5) << "\">" << escape(shown) << "</text>";
    }
    out_ << "</g>\n";
  }
  void text(double x, double y, const std::string& s, const char* extra = "") {
    out_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" " << extra << ">" << escape(s) << "</text>\n";
  }
  void line(double x1, double y1, double x2, double y2, const char* stroke) {
    out_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
         << "\" stroke=\"" << stroke << "\"/>\n";
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

// Whether a GPU operation was launched inside the iteration's range (the chain of ranges around
// its launch reaches it): the picture draws that iteration alone.
bool in_iteration(const Trace& t, const GpuOp& op, const Iteration& it) {
  for (int r = op.range; r >= 0; r = t.nvtx[r].parent)
    if (r == it.nvtx) return true;
  return false;
}

// The window drawn: the iteration's GPU span with a margin, across the plot's width.
struct Window {
  Ns lo = 0, hi = 0;
  double x(Ns v) const {
    const double plot = kWidth - kLeft - kRight;
    return kLeft + double(v - lo) * plot / double(hi - lo);
  }
  double clamp_x(Ns v) const { return x(std::clamp(v, lo, hi)); }
  bool overlaps(Ns s, Ns e) const { return e >= lo && s <= hi; }
};

// The title (the iteration's numbers) and the line under it.
void draw_title(Svg& svg, double& y, const Analysis& a, const Iteration& it) {
  char title[256];
  std::snprintf(title, sizeof title,
                "`%s` iteration %llu: host %.3f ms, GPU %.3f ms, fill %.1f%% of its GPU span, %d gaps > %g us",
                a.range_name.c_str(), static_cast<unsigned long long>(it.index), it.duration() / 1e6,
                it.gpu_span() / 1e6, it.span_fill_pct(), it.gaps, a.gap_threshold_us);
  svg.text(kLeft, y, title, "font-size=\"14\" font-weight=\"bold\"");
  y += 18;
  char subtitle[256];
  std::snprintf(subtitle, sizeof subtitle,
                "; this iteration alone (its ranges, its thread's calls inside its range, its GPU work), time in ms "
                "over its GPU span; the host began enqueuing it %.3f ms before its first GPU work started",
                (it.gpu_start - it.start) / 1e6);
  svg.text(kLeft, y, a.source + subtitle, "fill=\"#555\"");
  y += 22;
}

// The time axis in ms from the window's start, and its grid lines down to `lanes_height`
// below it (drawn first, so the boxes draw over them).
void draw_axis(Svg& svg, double& y, const Window& w, double lanes_height) {
  const double step = tick_step_ms((w.hi - w.lo) / 1e6);
  const double axis_y = y;
  for (double v = 0; v <= (w.hi - w.lo) / 1e6 + 1e-9; v += step) {
    const double px = w.x(w.lo + static_cast<Ns>(std::llround(v * 1e6)));
    char label[32];
    std::snprintf(label, sizeof label, "%g", v);
    svg.text(px - 8, axis_y, label, "fill=\"#555\"");
  }
  y += 8;
  const double lanes_bottom = y + lanes_height;
  for (double v = 0; v <= (w.hi - w.lo) / 1e6 + 1e-9; v += step) {
    const double px = w.x(w.lo + static_cast<Ns>(std::llround(v * 1e6)));
    svg.line(px, y, px, lanes_bottom, "#eeeeee");
  }
}

// The iteration's NVTX ranges, one row per nesting level below the iteration's; when none of
// them reaches into the window (the host enqueued the iteration before its GPU work began), a
// line that says so.
void draw_nvtx(Svg& svg, double& y, const Trace& t, const NvtxEvent& ir, const std::vector<int>& ranges, int rows,
               const Window& w) {
  svg.text(8, y + kRow - 5, "NVTX (" + t.thread_name(ir.pid, ir.tid) + ")");
  if (!w.overlaps(ir.start, ir.end)) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "the host ran this iteration's range from %.3f to %.3f ms before this window: the host ran ahead",
                  (w.lo - ir.start) / 1e6, (w.lo - ir.end) / 1e6);
    svg.text(kLeft + 4, y + kRow - 5, line, "fill=\"#555\"");
  }
  for (int r : ranges) {
    const NvtxEvent& n = t.nvtx[r];
    const int row = n.depth - ir.depth;
    if (row >= rows) continue;
    svg.rect(w.clamp_x(n.start), y + row * kRow, w.clamp_x(n.end) - w.clamp_x(n.start), kRow - 2,
             row % 2 ? "#d9d9d9" : "#c7c7c7", n.text + " (" + duration(n.end - n.start) + ")", n.text);
  }
  y += rows * kRow + kLaneGap;
}

// The iterating thread's CUDA API calls inside the iteration's range, the blocking ones red.
void draw_api(Svg& svg, double& y, const TraceJoin& j, const NvtxEvent& ir, const Analysis& a, const Window& w) {
  const Trace& t = j.trace();
  std::set<std::pair<Ns, std::string>> blocking;
  for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
    for (const SyncCall& s : *list) blocking.insert({s.start, s.api});
  svg.text(8, y + kRow - 5, "CUDA API");
  for (int c : j.thread_calls(ir.pid, ir.tid)) {
    const ApiCall& call = t.api_calls[c];
    if (call.start < ir.start || call.start > ir.end || !w.overlaps(call.start, call.end)) continue;
    const bool blocks = blocking.count({call.start, call.name}) > 0;
    svg.rect(w.clamp_x(call.start), y, w.clamp_x(call.end) - w.clamp_x(call.start), kRow - 2,
             blocks ? "#d62728" : "#8c8c8c", call.name + " (" + duration(call.end - call.start) + ")", call.name);
  }
  y += kRow + kLaneGap;
}

// One lane per (device, stream) with the iteration's GPU work, its gaps shaded across all of them.
void draw_gpu(Svg& svg, double& y, const TraceJoin& j, const Analysis& a, const Iteration& it,
              const std::set<std::pair<uint32_t, uint32_t>>& lanes, const Window& w) {
  const Trace& t = j.trace();
  const double gpu_top = y;
  std::map<std::pair<uint32_t, uint32_t>, double> lane_y;
  for (const auto& lane : lanes) {
    lane_y[lane] = y;
    svg.text(8, y + kRow - 5, "GPU " + std::to_string(lane.first) + " stream " + std::to_string(lane.second));
    y += kRow + 2;
  }
  for (const Gap& g : a.gaps) {
    if (g.iteration != it.index) continue;
    const double gx = w.clamp_x(g.start), gw = w.clamp_x(g.end) - gx;
    svg.rect(gx, gpu_top - 2, gw, y - gpu_top + 2, "#d62728",
             "idle " + duration(g.duration()) + " (" + gap_cause_name(g.cause) + "), before " + g.after + "; CPU in " +
                 (g.cpu_in_cuda * 2 >= g.duration() ? g.cpu_api.str() : std::string("host code")) + " / " + g.cpu_range,
             "", 0.18);
  }
  for (const GpuOp& op : j.ops()) {
    if (!in_iteration(t, op, it)) continue;
    svg.rect(w.clamp_x(op.start), lane_y[{op.device, op.stream}], w.clamp_x(op.end) - w.clamp_x(op.start), kRow - 2,
             category_color(op.category),
             op.label + " [" + category_name(op.category) + "] " + duration(op.end - op.start) +
                 (op.range >= 0 ? " in " + t.nvtx[op.range].text : ""),
             op.label);
  }
  // Gap lengths above the shading, where there is room.
  for (const Gap& g : a.gaps) {
    if (g.iteration != it.index) continue;
    const std::string label = duration(g.duration());
    if (w.clamp_x(g.end) - w.clamp_x(g.start) >= label.size() * kCharWidth)
      svg.text(w.clamp_x(g.start) + 1, y + 12, label, "fill=\"#d62728\"");
  }
  y += 26;
}

void draw_legend(Svg& svg, double& y, double gap_threshold_us) {
  double lx = kLeft;
  for (int c = 0; c < kCategoryCount; ++c) {
    const Category cat = static_cast<Category>(c);
    svg.rect(lx, y, 12, 12, category_color(cat), category_name(cat));
    svg.text(lx + 16, y + 10, category_name(cat));
    lx += 36 + std::string(category_name(cat)).size() * kCharWidth;  // generous: renderers' fonts vary
  }
  svg.rect(lx, y, 12, 12, "#d62728", "idle gap", "", 0.18);
  svg.text(lx + 16, y + 10, "idle gap > " + num(gap_threshold_us) + " us");
  y += 24;
}

}  // namespace

void check_svg(const Analysis& a, int iteration) {
  if (iteration < 0) iteration = a.svg_iteration;
  if (iteration < 0 || iteration >= static_cast<int>(a.iterations.size()) || !a.iterations[iteration].has_gpu)
    throw TraceError("no iteration with GPU work to draw in the SVG timeline.");
}

void write_svg(const TraceJoin& j, const Analysis& a, const std::string& path, int iteration) {
  const Trace& t = j.trace();
  check_svg(a, iteration);
  if (iteration < 0) iteration = a.svg_iteration;
  const Iteration& it = a.iterations[iteration];
  const NvtxEvent& ir = t.nvtx[it.nvtx];
  // The window is the iteration's GPU span: the host may have enqueued it long before (a
  // GPU-bound loop runs ahead), and what matters here is what the GPU did, and what the
  // host was doing meanwhile.
  const Ns pad = std::max<Ns>((it.gpu_end - it.gpu_start) / 50, 1);
  const Window w{it.gpu_start - pad, it.gpu_end + pad};

  // What goes in: the iteration alone, as the report names it: its range and the ranges inside
  // it, its thread's API calls inside its range, and the GPU work launched inside it, on every
  // stream it ran on. Nothing of another iteration or of the code after the loop (a final
  // synchronize the host waits in while the GPU runs this iteration) is drawn.
  std::vector<int> ranges;
  int rows = 1;
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const NvtxEvent& n = t.nvtx[r];
    if (n.pid != ir.pid || n.tid != ir.tid || n.depth < ir.depth || !w.overlaps(n.start, n.end)) continue;
    int up = static_cast<int>(r);
    while (up >= 0 && up != it.nvtx) up = t.nvtx[up].parent;
    if (up != it.nvtx) continue;
    ranges.push_back(static_cast<int>(r));
    rows = std::max(rows, n.depth - ir.depth + 1);
  }
  rows = std::min(rows, 6);
  std::set<std::pair<uint32_t, uint32_t>> lanes;
  for (const GpuOp& op : j.ops())
    if (in_iteration(t, op, it)) lanes.insert({op.device, op.stream});

  Svg svg;
  double y = 24;
  draw_title(svg, y, a, it);
  draw_axis(svg, y, w, rows * kRow + kLaneGap + kRow + kLaneGap + lanes.size() * (kRow + 2));
  draw_nvtx(svg, y, t, ir, ranges, rows, w);
  draw_api(svg, y, j, ir, a, w);
  draw_gpu(svg, y, j, a, it, lanes, w);
  draw_legend(svg, y, a.gap_threshold_us);

  std::ostringstream f;
  f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << num(y) << "\" viewBox=\"0 0 "
    << kWidth << " " << num(y) << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << svg.str() << "</svg>\n";
  write_output(path, "the SVG timeline", f.str());
}

}  // namespace laptime::trace
