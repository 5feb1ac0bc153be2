#include "trace/write/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "trace/model/text.h"

#include "trace/model/format.h"

namespace laptime::trace {
namespace {

const char* colour(const RoofPlotPoint& p) { return p.compute ? "#4e79a7" : "#e15759"; }

// The plot, drawn in the order of its layers: the frame (titles, decades, axes), the roof, the
// points, their labels, the lines under the plot. Log-log axes: decades that hold every point,
// the ridge and the roof.
class Plot {
 public:
  explicit Plot(const RoofPlot& p) : p(p), peak(p.peak_tflops), bw(p.copy_gbps), ridge(p.ridge) {
    double x_lo = ridge / 2, x_hi = ridge * 2, y_lo = peak / 20, y_hi = peak;
    for (const RoofPlotPoint& q : p.points) {
      x_lo = std::min(x_lo, q.intensity / 2);
      x_hi = std::max(x_hi, q.intensity * 2);
      y_lo = std::min(y_lo, q.tflops / 2);
      y_hi = std::max(y_hi, q.tflops);
    }
    lx0 = std::floor(std::log10(x_lo));
    lx1 = std::ceil(std::log10(x_hi) + 1e-9);
    ly0 = std::floor(std::log10(y_lo));
    ly1 = std::ceil(std::log10(y_hi * 1.15));
    // Bounded axes: a grid line per decade, so at most kDecades of them; a point further out
    // (values the readers refuse, or a caller's own) is drawn beyond the frame, not by a loop
    // over 600 decades.
    const auto bound = [](double& lo, double& hi) {
      if (!std::isfinite(hi)) hi = 0;
      if (!std::isfinite(lo) || lo > hi) lo = hi - 1;
      lo = std::max(lo, hi - kDecades);
    };
    bound(lx0, lx1);
    bound(ly0, ly1);
    x_start = std::max(std::pow(10.0, lx0), std::pow(10.0, ly0) * 1e3 / bw);
  }

  std::string svg() {
    frame();
    roof();
    points();
    labels();
    listed();
    return s.str();
  }

 private:
  struct Box {
    double x0, y0, x1, y1;
    bool hits(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  };
  static constexpr double L = 90, T = 70, W = 900, H = 560;
  static constexpr double kDecades = 24;
  double X(double v) const { return L + (std::log10(v) - lx0) / (lx1 - lx0) * W; }
  double Y(double v) const { return T + H - (std::log10(v) - ly0) / (ly1 - ly0) * H; }
  static std::string n1(double v) { return detail::format("%.1f", v); }

  void frame() {
    const double height = T + H + 70 + 16.0 * static_cast<double>(p.listed.size());
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << n1(L + W + 40) << "\" height=\"" << n1(height)
      << "\" font-family=\"sans-serif\" font-size=\"10\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << n1(L) << "\" y=\"22\" font-size=\"15\">" << xml_escape(p.title) << "</text>\n";
    s << "<text x=\"" << n1(L) << "\" y=\"42\">" << xml_escape(p.subtitle) << "</text>\n";
    // Grid and axes, one line per decade.
    for (double e = lx0; e <= lx1 + 1e-9; ++e) {
      const double x = X(std::pow(10.0, e));
      s << "<line x1=\"" << n1(x) << "\" y1=\"" << n1(T) << "\" x2=\"" << n1(x) << "\" y2=\"" << n1(T + H)
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << n1(x) << "\" y=\"" << n1(T + H + 16) << "\" text-anchor=\"middle\">"
        << detail::format("%g", std::pow(10.0, e)) << "</text>\n";
    }
    for (double e = ly0; e <= ly1 + 1e-9; ++e) {
      const double y = Y(std::pow(10.0, e));
      s << "<line x1=\"" << n1(L) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(L + W) << "\" y2=\"" << n1(y)
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << n1(L - 6) << "\" y=\"" << n1(y + 4) << "\" text-anchor=\"end\">"
        << detail::format("%g", std::pow(10.0, e)) << "</text>\n";
    }
    s << "<rect x=\"" << n1(L) << "\" y=\"" << n1(T) << "\" width=\"" << n1(W) << "\" height=\"" << n1(H)
      << "\" fill=\"none\" stroke=\"#444\"/>\n";
    s << "<text x=\"" << n1(L + W / 2) << "\" y=\"" << n1(T + H + 36)
      << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte moved)</text>\n";
    s << "<text transform=\"translate(" << n1(L - 52) << " " << n1(T + H / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">achieved TFLOP/s</text>\n";
  }

  void roof() {
    // The bandwidth slope up to the ridge, then flat at the compute ceiling.
    s << "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"2\" points=\"" << n1(X(x_start)) << ","
      << n1(Y(x_start * bw / 1e3)) << " " << n1(X(ridge)) << "," << n1(Y(peak)) << " " << n1(X(std::pow(10.0, lx1)))
      << "," << n1(Y(peak)) << "\"/>\n";
    s << "<text x=\"" << n1(X(ridge) + 6) << "\" y=\"" << n1(Y(peak) - 6) << "\">" << xml_escape(p.roof_label)
      << "</text>\n";
    s << "<text x=\"" << n1(X(x_start) + 4) << "\" y=\"" << n1(Y(x_start * bw / 1e3) - 8) << "\">"
      << detail::format("%.0f", bw) << " GB/s</text>\n";
  }

  // The points first (a hollow one with a dashed line to its filled point); each label then goes
  // to the first free spot around its point (right, left, above, below, then further up or down
  // with a leader line): free of the points, of the labels placed before, and inside the plot.
  void points() {
    for (const RoofPlotPoint& q : p.points) {
      const double x = X(q.intensity), y = Y(q.tflops);
      taken.push_back({x - 4, y - 4, x + 4, y + 4});
      if (q.hollow && q.joined_to >= 0 && static_cast<size_t>(q.joined_to) < p.points.size()) {
        const RoofPlotPoint& to = p.points[static_cast<size_t>(q.joined_to)];
        s << "<line x1=\"" << n1(x) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(X(to.intensity)) << "\" y2=\""
          << n1(Y(to.tflops)) << "\" stroke=\"" << colour(q) << "\" stroke-width=\"0.8\" stroke-dasharray=\"3,3\"/>\n";
      }
      s << "<circle cx=\"" << n1(x) << "\" cy=\"" << n1(y) << "\" r=\"4\" fill=\""
        << (q.hollow ? std::string("white\" stroke=\"") + colour(q) : std::string(colour(q))) << "\"><title>"
        << xml_escape(q.tooltip) << "</title></circle>\n";
    }
    taken.push_back(
        {X(ridge) + 6, Y(peak) - 15, X(ridge) + 6 + 5.8 * static_cast<double>(p.roof_label.size()), Y(peak) - 4});
    taken.push_back({X(x_start) + 4, Y(x_start * bw / 1e3) - 17, X(x_start) + 64, Y(x_start * bw / 1e3) - 6});
  }

  void labels() {
    const Box plot{L, T, L + W, T + H};
    for (const RoofPlotPoint& q : p.points) {
      if (q.hollow) continue;
      const double x = X(q.intensity), y = Y(q.tflops);
      const double lw = 5.8 * static_cast<double>(q.label.size());
      std::vector<std::pair<double, double>> spots{
          {x + 6, y + 4}, {x - 6 - lw, y + 4}, {x - lw / 2, y - 8}, {x - lw / 2, y + 16}};
      for (int k = 1; k <= 12; ++k) {
        spots.push_back({x + 6, y + 4 - 12.0 * k});
        spots.push_back({x + 6, y + 4 + 12.0 * k});
        spots.push_back({x - 6 - lw, y + 4 - 12.0 * k});
        spots.push_back({x - 6 - lw, y + 4 + 12.0 * k});
      }
      size_t pick = 0;
      for (size_t i = 0; i < spots.size(); ++i) {
        const Box b{spots[i].first, spots[i].second - 9, spots[i].first + lw, spots[i].second + 2};
        bool free = b.x0 >= plot.x0 && b.x1 <= plot.x1 && b.y0 >= plot.y0 && b.y1 <= plot.y1;
        for (const Box& o : taken) free = free && !b.hits(o);
        if (free) {
          pick = i;
          break;
        }
      }
      const auto [tx, ty] = spots[pick];
      taken.push_back({tx, ty - 9, tx + lw, ty + 2});
      if (pick >= 4)  // away from its point: a leader line
        s << "<line x1=\"" << n1(x) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(tx < x ? tx + lw : tx) << "\" y2=\""
          << n1(ty - 4) << "\" stroke=\"" << colour(q) << "\" stroke-width=\"0.5\"/>\n";
      s << "<text x=\"" << n1(tx) << "\" y=\"" << n1(ty) << "\" fill=\"" << colour(q) << "\">" << xml_escape(q.label)
        << "</text>\n";
    }
  }

  void listed() {
    double ty = T + H + 58;
    if (!p.listed.empty())
      s << "<text x=\"" << n1(L) << "\" y=\"" << n1(ty) << "\">" << xml_escape(p.listed_heading) << "</text>\n";
    for (const std::string& line : p.listed) {
      ty += 16;
      s << "<text x=\"" << n1(L + 12) << "\" y=\"" << n1(ty) << "\" fill=\"#e15759\">" << xml_escape(line)
        << "</text>\n";
    }
    s << "</svg>\n";
  }

  const RoofPlot& p;
  const double peak, bw, ridge;
  double lx0 = 0, lx1 = 0, ly0 = 0, ly1 = 0;  // the decades of each axis
  double x_start = 0;                         // where the bandwidth slope enters the plot
  std::vector<Box> taken;                     // what a label must not cover
  std::ostringstream s;
};

}  // namespace

std::string roofline_plot_svg(const RoofPlot& p) { return Plot(p).svg(); }

}  // namespace laptime::trace
