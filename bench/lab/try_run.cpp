#include "bench/lab/try_run.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "bench/lab/run.h"
#include "bench/lab/try_child.h"
#include "core/check.h"
#include "core/input_file.h"
#include "core/os.h"
#include "kernels/lab/try_compile.h"
#include "kernels/lab/user_kernel.h"
#include "trace/model/format.h"
#include "trace/model/text.h"
#include "trace/read/sidecars.h"

namespace laptime::lab {
namespace {

// A compile of every file may take a while (a template-heavy file); it has no GPU wait to time.
constexpr double kCompileLimitSeconds = 600;

std::vector<TrySource> read_sources(const LabOptions& o) {
  std::vector<TrySource> sources;
  for (const std::string& path : o.tries) {
    try {
      sources.push_back(read_try_source(path));
    } catch (const InputError& e) {
      throw Error(e.what());
    }
  }
  return sources;
}

std::string listed(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  return s;
}

// Prints what the compiler said (as it wrote it) and throws for a file that did not compile.
void report_compiles(const std::vector<TrySource>& sources, const std::vector<TryBinary>& binaries,
                     const std::string& kernel) {
  std::vector<std::string> failed;
  std::string problem;
  for (size_t i = 0; i < binaries.size(); ++i) {
    const TryBinary& b = binaries[i];
    if (!b.log.empty()) std::fprintf(stderr, "%s%s", b.log.c_str(), b.log.back() == '\n' ? "" : "\n");
    if (b.compiled) continue;
    failed.push_back(sources[i].path);
    if (problem.empty()) problem = b.problem;
  }
  std::fflush(stderr);
  if (failed.empty()) return;
  if (!problem.empty() && failed.size() == 1) throw Error(problem);
  const TryBinary& b = binaries.front();
  throw Error(listed(failed) + " did not compile for " + b.arch + " (NVRTC " + b.nvrtc +
              "): the compiler's messages are above" + (problem.empty() ? "" : "; " + problem) + " (`laptime lab " +
              kernel + " --template` writes a file that compiles).");
}

nlohmann::json binary_json(const TryBinary& b) {
  return {{"compiled", b.compiled}, {"log", b.log},         {"problem", b.problem},       {"arch", b.arch},
          {"nvrtc", b.nvrtc},       {"seconds", b.seconds}, {"from_cache", b.from_cache}, {"cache_note", b.cache_note}};
}

TryBinary binary_from_json(const nlohmann::json& j) {
  TryBinary b;
  b.compiled = j.value("compiled", false);
  b.log = j.value("log", "");
  b.problem = j.value("problem", "");
  b.arch = j.value("arch", "");
  b.nvrtc = j.value("nvrtc", "");
  b.seconds = j.value("seconds", 0.0);
  b.from_cache = j.value("from_cache", false);
  b.cache_note = j.value("cache_note", "");
  return b;
}

// Step 1, in the child: the GPU's architecture (or none), then every file compiled for it.
nlohmann::json compile_all(const LabOptions& o, const TrySignature& sig, const std::vector<TrySource>& sources) {
  nlohmann::json j;
  std::string why;
  const bool gpu = gpu_available(&why);
  std::string arch = kNoGpuArch;
  if (gpu) {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    require(o.device >= 0 && o.device < count, "device " + std::to_string(o.device) +
                                                   " does not exist (this machine has " + std::to_string(count) +
                                                   " CUDA device(s)).");
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, o.device));
    arch = try_arch(p.major, p.minor);
  }
  j["gpu"] = gpu;
  j["why"] = why;
  j["files"] = nlohmann::json::array();
  for (const TrySource& s : sources)
    j["files"].push_back(binary_json(compile_try(sig, s, o.precision, arch, lab_cache_dir())));
  return j;
}

// Step 2, in the child: one file as a rung.
nlohmann::json run_rung(const LabOptions& o, const KernelInfo& k, const TrySignature& sig, const TrySource& src) {
  Context ctx(o.device, StreamKind::Created, NvtxLevel::Layer);
  const TryBinary b =
      compile_try(sig, src, o.precision, try_arch(ctx.props().major, ctx.props().minor), lab_cache_dir());
  if (!b.compiled) return {{"error", b.problem.empty() ? src.path + " did not compile here." : b.problem}};
  const UserVersionInfo info{k.name, base_name(src.path), src.path, src.sha256, compiled_text(b)};
  const int index = add_user_version(std::make_shared<UserKernel>(sig, info, b.cubin, o.device));
  LabResult r = start_result(o, k, ctx, {index});
  run_versions(o, k, ctx, r);
  return {{"version", version_to_json(r.versions.front())}};
}

// A rung whose child did not report: FAILED with what happened.
VersionResult failed_rung(const LabOptions& o, const KernelInfo& k, const TrySource& src, const std::string& where,
                          const std::string& why) {
  VersionResult v;
  v.index = -1;
  v.id = base_name(src.path);
  v.title = "your file " + src.path;
  v.file = src.path;
  v.sha256 = src.sha256;
  CheckRow row;
  row.shape = where.empty() ? "-" : where;
  row.inputs = "-";
  row.rel_error = NAN;
  row.bound = k.tolerance.at(o.precision);
  row.detail = why;
  v.checks.push_back(row);
  return v;
}

std::string self_executable() {
  std::string path(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0 || static_cast<size_t>(n) >= path.size()) return "laptime";
  path.resize(static_cast<size_t>(n));
  return path;
}

}  // namespace

std::string lab_cache_dir() { return trace::cache_folder() + "/nvrtc"; }

std::string sanitizer_command(const LabOptions& o, const std::string& file) {
  std::vector<std::string> argv{"compute-sanitizer", "--tool",     "memcheck", self_executable(), "lab", o.kernel, "-p",
                                o.precision,         "--versions", "none",     "--try",           file,  "--once"};
  for (const std::string& s : o.shapes) argv.insert(argv.end(), {"--shape", s});
  if (o.seed) argv.insert(argv.end(), {"--seed", std::to_string(*o.seed)});
  return trace::shell_words(argv);
}

TryRungs run_tries_apart(const LabOptions& o, const KernelInfo& k) {
  TryRungs out;
  if (o.tries.empty()) return out;
  const TrySignature& sig = *find_try_signature(k.name);
  const std::vector<TrySource> sources = read_sources(o);
  if (o.once) return out;  // load_tries_here compiles and reports, in this process

  const ChildEnd c =
      run_in_child([&] { return compile_all(o, sig, sources); }, kCompileLimitSeconds, kCompileLimitSeconds);
  if (c.how != ChildEnd::How::Reported)
    throw Error("the compile of the --try files " +
                (c.how == ChildEnd::How::Died
                     ? c.why
                     : "did not finish within " + std::to_string(static_cast<int>(kCompileLimitSeconds)) +
                           " s: it was stopped") +
                ".");
  if (c.result.contains("error")) throw Error(c.result["error"].get<std::string>());
  std::vector<TryBinary> binaries;
  for (const nlohmann::json& f : c.result["files"]) binaries.push_back(binary_from_json(f));
  report_compiles(sources, binaries, k.name);
  if (!c.result["gpu"].get<bool>()) {
    std::vector<std::string> paths;
    for (const TrySource& s : sources) paths.push_back(s.path);
    throw Error(listed(paths) + (paths.size() == 1 ? " compiles" : " compile") + " for " + binaries.front().arch +
                " and " + (paths.size() == 1 ? "declares " : "declare ") + k.name + " as the lab calls it; running " +
                (paths.size() == 1 ? "it" : "them") + " needs a GPU: " + c.result["why"].get<std::string>() + ".");
  }

  const double limit = std::max(300.0, 20 * o.timeout);
  for (size_t i = 0; i < sources.size(); ++i) {
    const TrySource& src = sources[i];
    const ChildEnd r = run_in_child([&] { return run_rung(o, k, sig, src); }, o.timeout, limit);
    const std::string at = r.phase.empty() ? "" : " (" + r.phase + ")";
    switch (r.how) {
      case ChildEnd::How::Reported:
        if (r.result.contains("version")) {
          out.rungs.push_back(version_from_json(r.result["version"]));
        } else {
          out.rungs.push_back(failed_rung(o, k, src, r.phase, r.result.value("error", std::string("no result"))));
        }
        break;
      case ChildEnd::How::TimedOut: {
        std::ostringstream why;
        why << "a wait on the GPU passed --timeout " << o.timeout << " s" << at
            << ": its process was ended, and the kernel with it. A kernel that only needs longer: a larger --timeout; "
               "one that never ends: "
            << sanitizer_command(o, src.path) << " (or cuda-gdb).";
        out.rungs.push_back(failed_rung(o, k, src, r.phase, why.str()));
        break;
      }
      case ChildEnd::How::Stopped:
        out.rungs.push_back(failed_rung(o, k, src, r.phase,
                                        "its checks and timing did not finish within " +
                                            std::to_string(static_cast<int>(limit)) + " s" + at + ": stopped."));
        break;
      case ChildEnd::How::Died:
        out.rungs.push_back(
            failed_rung(o, k, src, r.phase,
                        "its process " + r.why + at + "; to see where: " + sanitizer_command(o, src.path) + "."));
        break;
    }
    if (out.rungs.back().compiled.empty()) out.rungs.back().compiled = compiled_text(binaries[i]);
  }
  return out;
}

std::vector<int> load_tries_here(const LabOptions& o, const KernelInfo& k, Context& ctx) {
  const TrySignature& sig = *find_try_signature(k.name);
  const std::vector<TrySource> sources = read_sources(o);
  std::vector<TryBinary> binaries;
  for (const TrySource& s : sources)
    binaries.push_back(
        compile_try(sig, s, o.precision, try_arch(ctx.props().major, ctx.props().minor), lab_cache_dir()));
  report_compiles(sources, binaries, k.name);
  std::vector<int> indices;
  for (size_t i = 0; i < sources.size(); ++i) {
    const UserVersionInfo info{k.name, base_name(sources[i].path), sources[i].path, sources[i].sha256,
                               compiled_text(binaries[i])};
    indices.push_back(add_user_version(std::make_shared<UserKernel>(sig, info, binaries[i].cubin, o.device)));
  }
  return indices;
}

}  // namespace laptime::lab
