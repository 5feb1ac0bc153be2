// `laptime lab`'s words checked against the registry, on the host (bench/lab/lab.h).
#include <algorithm>
#include <set>

#include "bench/lab/lab.h"
#include "core/check.h"
#include "core/os.h"
#include "kernels/lab/try_signature.h"

namespace laptime::lab {
namespace {

// "" when `kernel` takes a learner's file, else the sentence (for --template and --try).
std::string takes_no_file(const std::string& flag, const std::string& kernel) {
  if (find_try_signature(kernel)) return "";
  return flag + ": " + kernel + " takes no file of yours.";
}

}  // namespace

void resolve_lab_options(LabOptions& o) {
  if (o.list) {
    require(o.kernel.empty(),
            "--list lists every kernel: give it no KERNEL (`laptime lab " + o.kernel + "` runs one).");
    require(o.shapes.empty() && o.versions == "all" && o.precision.empty() && !o.once && !o.seed && o.peak.empty() &&
                o.tries.empty() && !o.template_file && !o.all && o.html.empty(),
            "--list takes --json alone; --versions, --shape, -p, --once, --seed, --peak, --html, --try, "
            "--template and --all apply to `laptime lab KERNEL`.");
    return;
  }
  if (o.all) {
    require(o.kernel.empty(), "--all runs every kernel: give it no KERNEL (`laptime lab " + o.kernel + "` runs one).");
    require(o.shapes.empty() && o.versions == "all" && o.precision.empty() && !o.once && o.tries.empty() &&
                !o.template_file,
            "--all runs every kernel's first and production versions at the models' shapes in its default "
            "precision: it takes --json, --peak, --seed, --target and --device, not --versions, --shape, -p, --once, "
            "--try or --template.");
    return;
  }
  require(!o.kernel.empty(),
          "laptime lab needs a KERNEL to run, or --list for the kernels and their versions, or --all for every one.");
  require(unknown_kernel(o.kernel).empty(), unknown_kernel(o.kernel));
  const KernelInfo& k = *find_kernel(o.kernel);
  if (o.template_file) {
    require(takes_no_file("--template", k.name).empty(), takes_no_file("--template", k.name));
    require(o.tries.empty() && o.shapes.empty() && o.versions == "all" && o.precision.empty() && !o.once && !o.seed &&
                o.peak.empty() && o.json.empty(),
            "--template writes the file and runs nothing: give it no other flag (then `laptime lab " + k.name +
                " --try FILE.cu`).");
    return;
  }
  if (o.precision.empty()) o.precision = k.precisions.front();
  if (!k.has_precision(o.precision)) {
    std::string list;
    for (const std::string& p : k.precisions) list += (list.empty() ? "" : " and ") + p;
    throw Error(k.name + " runs in " + list + ", not " + o.precision + ".");
  }
  require(parse_versions(k, o.versions, &o.version_indices).empty(), parse_versions(k, o.versions, &o.version_indices));
  require(!(o.version_indices.empty() && o.tries.empty()),
          "--versions none runs no version of the ladder: give --try FILE.cu for a file of yours.");
  if (!o.tries.empty()) require(takes_no_file("--try", k.name).empty(), takes_no_file("--try", k.name));
  std::set<std::string> names;
  for (const std::string& t : o.tries) {
    require(!t.empty(), "--try: the file name is empty; give a .cu file.");
    require(names.insert(base_name(t)).second,
            "--try names two files called " + base_name(t) + ": each rung is named by its file; rename one.");
  }
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
