#include "bench/lab/kernel_files.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>

#include "bench/lab/case.h"
#include "bench/lab/measure.h"
#include "bench/lab/try_child.h"
#include "core/check.h"
#include "core/input_file.h"
#include "core/os.h"
#include "kernels/lab/try_compile.h"
#include "bench/lab/try_run.h"
#include "kernels/lab/user_kernel.h"

namespace laptime::lab {

KernelChoice load_kernel_files(Context& ctx, const KernelChoice& choice, const KernelFiles& files,
                               const std::map<std::string, std::vector<int64_t>>& shapes, const std::string& model,
                               Precision precision) {
  KernelChoice out = choice;
  const std::string storage = precision == Precision::FP32 || precision == Precision::TF32 ? "fp32" : "bf16";
  for (const auto& [name, path] : files) {
    const KernelInfo& k = *find_kernel(name);
    const TrySignature& sig = *find_try_signature(name);
    TrySource src;
    try {
      src = read_try_source(path);
    } catch (const InputError& e) {
      throw Error(e.what());
    }
    const TryBinary b = compile_try(sig, src, storage, try_arch(ctx.props().major, ctx.props().minor), lab_cache_dir());
    if (!b.log.empty()) std::fprintf(stderr, "%s%s", b.log.c_str(), b.log.back() == '\n' ? "" : "\n");
    if (!b.compiled)
      throw Error(!b.problem.empty() ? b.problem
                                     : "--kernel " + name + "=" + path + " did not compile for " + b.arch + " (NVRTC " +
                                           b.nvrtc + "): the compiler's messages are above.");
    const UserVersionInfo info{name, base_name(path), path, src.sha256, compiled_text(b)};
    const int index = add_user_version(std::make_shared<UserKernel>(sig, info, b.cubin, ctx.device()));

    // The check at the model's shape, as the lab checks a version.
    const auto at = shapes.find(name);
    require(at != shapes.end(), "internal: the " + model + " workload gives no shape for kernel " + name + ".");
    const Shape shape{model + "'s shape", at->second};
    const std::string where = shape_text(k, shape.dims) + " (" + shape.label + ")";
    ProcessWatchdog watchdog(kCheckTimeoutSeconds, "--kernel " + name + "=" + path);
    std::unique_ptr<LabCase> c = make_case(k, shape, storage);
    require(c->prepare(index, ctx).empty(),
            "--kernel " + name + "=" + path + " cannot run at " + where + ": " + c->prepare(index, ctx) + ".");
    uint32_t seed = std::random_device{}();
    for (const InputKind kind : {InputKind::Random, InputKind::Zeros, InputKind::Huge}) {
      watch_phase("the check at " + where + ", " + input_kind_name(kind) + " inputs");
      c->set_inputs(kind, ++seed, ctx.stream());
      CheckRow row;
      try {
        row = check_version(*c, index, ctx, k.bound_of(index, storage), seed);
      } catch (const Error& e) {
        throw Error("--kernel " + name + "=" + path + " failed at " + where + ", " + input_kind_name(kind) +
                    " inputs: " + e.what());
      }
      if (row.passed) continue;
      std::ostringstream why;
      why << "--kernel " << name << "=" << path << " is wrong at " << where << ", " << input_kind_name(kind)
          << " inputs (seed " << seed << "): ";
      if (std::isfinite(row.rel_error)) why << "error " << row.rel_error << " > " << row.bound << "; ";
      why << row.detail << " (`laptime lab " << name << " --try " << path << "` shows every check).";
      throw Error(why.str());
    }
    std::fprintf(stderr, "laptime: --kernel %s=%s (sha256 %s) passed its checks at %s; compiled for %s\n", name.c_str(),
                 path.c_str(), src.sha256.substr(0, 16).c_str(), where.c_str(), info.compiled.c_str());
    out[name] = index;
  }
  return out;
}

}  // namespace laptime::lab
