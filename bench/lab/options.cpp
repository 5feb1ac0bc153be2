// `laptime lab`'s words checked against the registry, on the host (bench/lab/lab.h).
#include <algorithm>

#include "bench/lab/lab.h"
#include "core/check.h"

namespace laptime::lab {

void resolve_lab_options(LabOptions& o) {
  if (o.list) {
    require(o.kernel.empty(),
            "--list lists every kernel: give it no KERNEL (`laptime lab " + o.kernel + "` runs one).");
    require(
        o.shapes.empty() && o.versions == "all" && o.precision.empty() && !o.once && !o.seed && o.peak.empty() &&
            o.html.empty(),
        "--list takes --json alone; --versions, --shape, -p, --once, --seed, --peak and --html apply to `laptime lab "
        "KERNEL`.");
    return;
  }
  require(!o.kernel.empty(), "laptime lab needs a KERNEL to run, or --list for the kernels and their versions.");
  require(unknown_kernel(o.kernel).empty(), unknown_kernel(o.kernel));
  const KernelInfo& k = *find_kernel(o.kernel);
  if (o.precision.empty()) o.precision = k.precisions.front();
  if (!k.has_precision(o.precision)) {
    std::string list;
    for (const std::string& p : k.precisions) list += (list.empty() ? "" : " and ") + p;
    throw Error(k.name + " runs in " + list + ", not " + o.precision + ".");
  }
  require(parse_versions(k, o.versions, &o.version_indices).empty(), parse_versions(k, o.versions, &o.version_indices));
  o.timed_shapes.clear();
  for (const std::string& text : o.shapes) {
    Shape s;
    const std::string why = parse_shape(k, text, &s);
    require(why.empty(), why);
    o.timed_shapes.push_back(s);
  }
  if (o.timed_shapes.empty()) o.timed_shapes = k.model_shapes;
}

}  // namespace laptime::lab
