#include "trace/write/diff_svg.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "trace/model/category.h"
#include "trace/model/error.h"
#include "trace/write/timeline_svg.h"
#include "trace/model/text.h"
#include "trace/model/format.h"
#include "trace/analyses/kernel_mix.h"

namespace laptime::trace {

using detail::format;

namespace {

std::string n1(double v) { return format("%.1f", v); }

}  // namespace

void check_diff_svg(const Diff& d) {
  const Ns span = std::max(d.before.median_span, d.after.median_span);
  if (span <= 0 || (d.before.median_kernels.empty() && d.after.median_kernels.empty()))
    throw TraceError(
        "cannot draw the diff: neither side is a trace with GPU work in a steady iteration (bench "
        "reports hold laps only).");
}

void write_diff_svg(const Diff& d, const std::string& path) {
  constexpr double kW = 1600, kLeft = 150, kRight = 20, kRow = 16, kCharW = 6.0;
  constexpr int kMaxDepth = 3;  // layer rows drawn per side (deeper ones would crowd the picture)
  check_diff_svg(d);
  const Ns span = std::max(d.before.median_span, d.after.median_span);
  const double scale = (kW - kLeft - kRight) / double(span);
  auto x_of = [&](Ns t) { return kLeft + t * scale; };
  std::ostringstream s;
  double y = 40;
  std::map<std::string, std::pair<double, double>> top_before;  // top-level layer -> (x, y of its bottom edge)
  std::vector<std::string> lines;
  auto box = [&](double x0, double x1, double yy, double h, const std::string& fill, const std::string& tip,
                 const std::string& label) {
    const double w = std::max(x1 - x0, 0.6);
    s << "<g><title>" << xml_escape(tip) << "</title><rect x=\"" << n1(x0) << "\" y=\"" << n1(yy) << "\" width=\""
      << n1(w) << "\" height=\"" << n1(h) << "\" fill=\"" << fill << "\" stroke=\"#fff\" stroke-width=\"0.3\"/>";
    const size_t fits = static_cast<size_t>((w - 4) / kCharW);
    if (!label.empty() && fits >= 3)
      s << "<text x=\"" << n1(x0 + 2) << "\" y=\"" << n1(yy + h - 4) << "\">"
        << xml_escape(label.size() <= fits ? label : label.substr(0, fits - 1) + "~") << "</text>";
    s << "</g>\n";
  };
  // Each layer's row in the table (its name folded as the rows are): a SLOWER or FASTER layer is
  // marked on the after side, red or green, with its change, as the text's label column says it.
  std::map<std::string, const DiffRow*> row_of;
  for (const DiffRow& r : d.rows)
    if (!r.whole) row_of[r.name] = &r;
  auto marked = [&](const std::string& layer) -> const DiffRow* {
    const auto it = row_of.find(d.options.by == LayerKey::Folded ? fold_block_indices(layer) : layer);
    if (it == row_of.end()) return nullptr;
    const Label l = it->second->label;
    return l == Label::Slower || l == Label::Faster ? it->second : nullptr;
  };
  size_t marks = 0;
  auto side = [&](const DiffSide& r, const char* title, bool first) {
    s << "<text x=\"8\" y=\"" << n1(y - 6) << "\" font-weight=\"bold\">"
      << xml_escape(std::string(title) + ": " + r.file) << format(" (median iteration %.3f ms)", r.median_span / 1e6)
      << "</text>\n";
    int depth = 1;
    for (const DiffBox& b : r.median_layers) depth = std::max(depth, std::min(b.depth, kMaxDepth));
    for (int level = 1; level <= depth; ++level) {
      s << "<text x=\"8\" y=\"" << n1(y + kRow - 4) << "\" fill=\"#555\">layers, level " << level << "</text>\n";
      for (const DiffBox& b : r.median_layers) {
        if (b.depth != level) continue;
        const DiffRow* change = first ? nullptr : marked(b.name);
        if (change) {
          const bool slower = change->label == Label::Slower;
          ++marks;
          box(x_of(b.start), x_of(b.end), y, kRow - 2, slower ? "#f4a6a6" : "#a6dba0",
              b.name + format(": %.1f us on the GPU; ", (b.end - b.start) / 1e3) + change->name + " " +
                  label_name(change->label) +
                  format(" %+.1f%% (95%% interval %+.1f%% .. %+.1f%%)", change->change_pct,
                         100 * change->ci.lo / change->before_ns, 100 * change->ci.hi / change->before_ns),
              std::string(slower ? "SLOWER " : "FASTER ") + b.name);
          s << "<rect x=\"" << n1(x_of(b.start)) << "\" y=\"" << n1(y) << "\" width=\""
            << n1(std::max(x_of(b.end) - x_of(b.start), 0.6)) << "\" height=\"" << n1(kRow - 2)
            << "\" fill=\"none\" stroke=\"" << (slower ? "#d62728" : "#2ca02c") << "\" stroke-width=\"1.5\" class=\""
            << (slower ? "slower" : "faster") << "\"/>\n";
        } else {
          box(x_of(b.start), x_of(b.end), y, kRow - 2, level % 2 ? "#d9d9d9" : "#eeeeee",
              b.name + format(": %.1f us on the GPU", (b.end - b.start) / 1e3), b.name);
        }
        if (level == 1) {
          if (first) {
            top_before[b.name] = {x_of(b.start), y};
          } else if (auto it = top_before.find(b.name); it != top_before.end()) {
            lines.push_back("<line x1=\"" + n1(it->second.first) + "\" y1=\"" + n1(it->second.second) + "\" x2=\"" +
                            n1(x_of(b.start)) + "\" y2=\"" + n1(y) +
                            "\" stroke=\"#888\" stroke-width=\"0.6\" "
                            "stroke-dasharray=\"3,2\"/>");
          }
        }
      }
      y += kRow;
    }
    s << "<text x=\"8\" y=\"" << n1(y + kRow - 4) << "\" fill=\"#555\">kernels</text>\n";
    for (const DiffBox& k : r.median_kernels)
      box(x_of(k.start), x_of(k.end), y, kRow, category_color(k.category),
          k.name + format(" (%s): %.1f us", category_name(k.category), (k.end - k.start) / 1e3), "");
    y += kRow;
    if (first) {
      // Remember the bottom of the before side's first layer row: the joining lines start there.
      for (auto& [name, xy] : top_before) xy.second += kRow - 2;
    }
  };
  side(d.before, "before", true);
  y += 60;  // room for the joining lines
  side(d.after, "after", false);
  // Time axis.
  y += 10;
  const double raw = span / 1e6 / 10, p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  s << "<line x1=\"" << n1(kLeft) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(kW - kRight) << "\" y2=\"" << n1(y)
    << "\" stroke=\"#333\"/>\n";
  for (double t = 0; t <= span / 1e6 + 1e-9; t += step) {
    const double x = x_of(static_cast<Ns>(t * 1e6));
    s << "<line x1=\"" << n1(x) << "\" y1=\"" << n1(y) << "\" x2=\"" << n1(x) << "\" y2=\"" << n1(y + 4)
      << "\" stroke=\"#333\"/><text x=\"" << n1(x) << "\" y=\"" << n1(y + 16) << "\" text-anchor=\"middle\">"
      << format("%g ms", t) << "</text>\n";
  }
  y += 30;
  // Legend.
  double lx = kLeft;
  for (int c = 0; c < kCategoryCount; ++c) {
    const Category cat = static_cast<Category>(c);
    s << "<rect x=\"" << n1(lx) << "\" y=\"" << n1(y) << "\" width=\"12\" height=\"12\" fill=\"" << category_color(cat)
      << "\"/><text x=\"" << n1(lx + 16) << "\" y=\"" << n1(y + 10) << "\">" << category_name(cat) << "</text>\n";
    lx += 30 + kCharW * std::string(category_name(cat)).size();
  }
  y += 24;
  if (marks) {  // the marks' key, under the categories'
    lx = kLeft;
    for (const auto& [fill, stroke, what] :
         {std::tuple<const char*, const char*, const char*>{"#f4a6a6", "#d62728", "SLOWER layer (after side)"},
          {"#a6dba0", "#2ca02c", "FASTER layer (after side)"}}) {
      s << "<rect x=\"" << n1(lx) << "\" y=\"" << n1(y) << "\" width=\"12\" height=\"12\" fill=\"" << fill
        << "\" stroke=\"" << stroke << "\" stroke-width=\"1.5\"/><text x=\"" << n1(lx + 16) << "\" y=\"" << n1(y + 10)
        << "\">" << what << "</text>\n";
      lx += 40 + kCharW * std::string(what).size();
    }
    y += 24;
  }
  // Built whole, then written through core/output_file (a temporary renamed when complete,
  // never onto an input, a device or a FIFO, never through a link).
  std::ostringstream f;
  f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << n1(kW) << "\" height=\"" << n1(y)
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << s.str();
  for (const std::string& l : lines) f << l << "\n";
  f << "</svg>\n";
  write_output(path, "the SVG diff", f.str());
}

}  // namespace laptime::trace
