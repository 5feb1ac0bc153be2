#include "kernels/lab/try_compile.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

#include "core/input_file.h"
#include "core/os.h"
#include "core/output_file.h"
#include "core/sha256.h"

namespace laptime::lab {
namespace {

constexpr size_t kMaxSourceBytes = size_t{1} << 20;
constexpr size_t kMaxBinaryBytes = size_t{256} << 20;

bool has_cuda_headers(const std::string& dir) { return !dir.empty() && path_exists(dir + "/cuda_bf16.h"); }

// The folder of the loaded NVRTC library, "" when it cannot be told.
std::string nvrtc_library_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) == 0 || !info.dli_fname) return "";
  std::error_code ec;
  const std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? folder_of(info.dli_fname) : lib.parent_path().string();
}

// Whether the text #includes a file of its own ("..."), which the cache key cannot see.
bool includes_own_file(const std::string& text) {
  for (size_t at = text.find("#include"); at != std::string::npos; at = text.find("#include", at + 1)) {
    size_t q = at + 8;
    while (q < text.size() && (text[q] == ' ' || text[q] == '\t')) ++q;
    if (q < text.size() && text[q] == '"') return true;
  }
  return false;
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};

std::string nvrtc_text(nvrtcResult r) { return nvrtcGetErrorString(r); }

}  // namespace

TrySource read_try_source(const std::string& path) {
  TrySource s;
  s.path = path;
  s.text = read_input(path, "a kernel file", kMaxSourceBytes);
  s.sha256 = sha256_hex(s.text);
  return s;
}

CudaIncludeDir find_cuda_include_dir() {
  CudaIncludeDir r;
  std::vector<std::string> places;
  if (const char* v = std::getenv("CUDA_HOME"); v && *v) places.push_back(std::string(v) + "/include");
  if (const char* v = std::getenv("CUDA_PATH"); v && *v) places.push_back(std::string(v) + "/include");
  if (const std::string lib = nvrtc_library_folder(); !lib.empty()) {
    const std::string up = folder_of(lib);  // a toolkit's root, or site-packages/nvidia/cuda_nvrtc
    places.push_back(up + "/include");
    const std::string nvidia = folder_of(up);  // site-packages/nvidia: the other wheels' folders
    for (const char* wheel : {"cuda_runtime", "cu13", "cu12"}) places.push_back(nvidia + "/" + wheel + "/include");
  }
  if (const std::string nvcc = find_on_path("nvcc"); !nvcc.empty())
    places.push_back(folder_of(folder_of(nvcc)) + "/include");
#ifdef LAPTIME_BUILD_CUDA_INCLUDE_DIR
  places.push_back(LAPTIME_BUILD_CUDA_INCLUDE_DIR);
#endif
  places.push_back("/usr/local/cuda/include");
  for (const std::string& p : places) {
    r.tried.push_back(p);
    if (has_cuda_headers(p)) {
      r.dir = p;
      return r;
    }
  }
  return r;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string try_arch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major == 9 && minor == 0 ? "a" : "");
}

TryBinary compile_try(const TrySignature& s, const TrySource& src, const std::string& precision,
                      const std::string& arch, const std::string& cache_dir) {
  TryBinary b;
  b.arch = arch;
  b.nvrtc = nvrtc_version();
  const CudaIncludeDir inc = find_cuda_include_dir();
  std::vector<std::string> options{"--gpu-architecture=" + arch, "-lineinfo", "--std=c++17",
                                   "-D" + precision_macro(precision) + "=1", "-I" + folder_of(src.path)};
  if (!inc.dir.empty()) options.push_back("-I" + inc.dir);
  const std::string footer = signature_footer(s);
  const std::string text = src.text + footer;

  // The cache: the key covers everything the binary depends on but the CUDA headers, which
  // change with NVRTC's version.
  std::string key_text = b.nvrtc + "\n" + arch + "\n";
  for (const std::string& o : options)
    if (o.rfind("-I", 0) != 0) key_text += o + "\n";
  key_text += text;
  const bool own_include = includes_own_file(src.text);
  if (cache_dir.empty())
    b.cache_note = "no cache folder";
  else if (own_include)
    b.cache_note = "not cached: it #includes a file of its own, which the cache key cannot see";
  else
    b.cache_file = cache_dir + "/" + sha256_hex(key_text) + ".cubin";
  if (!b.cache_file.empty() && path_exists(b.cache_file)) {
    try {
      b.cubin = read_input(b.cache_file, "a cached kernel binary", kMaxBinaryBytes);
      b.compiled = b.from_cache = !b.cubin.empty();
      if (b.compiled) return b;
    } catch (const InputError&) {
      // unreadable: compile again, and replace it below
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{});
  const nvrtcResult created = nvrtcCreateProgram(program.get(), text.c_str(), src.path.c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS) {
    b.problem = "NVRTC could not take " + src.path + " (" + nvrtc_text(created) + ").";
    return b;
  }
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(*program, static_cast<int>(argv.size()), argv.data());
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(*program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    b.log.resize(log_size);
    nvrtcGetProgramLog(*program, b.log.data());
    b.log.resize(log_size - 1);  // the terminating NUL
  }
  if (compiled != NVRTC_SUCCESS) {
    if (b.log.empty()) b.problem = "NVRTC could not compile " + src.path + " (" + nvrtc_text(compiled) + ").";
    if (inc.dir.empty() && b.log.find("cuda_bf16.h") != std::string::npos) {
      std::string tried;
      for (const std::string& t : inc.tried) tried += (tried.empty() ? "" : ", ") + t;
      b.problem = "the CUDA headers (cuda_bf16.h) were found in none of " + tried +
                  ": set CUDA_HOME to the toolkit's folder (docs/KERNELS.md, \"Write your own\").";
    }
    return b;
  }
  size_t ptx_size = 0;
  std::string ptx;
  if (nvrtcGetPTXSize(*program, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
    ptx.resize(ptx_size);
    nvrtcGetPTX(*program, ptx.data());
  }
  if (std::string why = check_ptx_entries(ptx, s, src.path); !why.empty()) {
    b.problem = why;
    return b;
  }
  size_t cubin_size = 0;
  const nvrtcResult got = nvrtcGetCUBINSize(*program, &cubin_size);
  if (got != NVRTC_SUCCESS || cubin_size == 0) {
    b.problem = "NVRTC made no machine code of " + src.path + " for " + arch + " (" + nvrtc_text(got) + ").";
    return b;
  }
  b.cubin.resize(cubin_size);
  nvrtcGetCUBIN(*program, b.cubin.data());
  b.compiled = true;
  if (b.cache_file.empty()) return b;
  try {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    OutputFile out(OutputSpec{"compiled kernel cache", b.cache_file});
    out.write(b.cubin);
    out.commit();
  } catch (const OutputError& e) {
    b.cache_note = std::string("not cached: ") + e.what();
    b.cache_file.clear();
  }
  return b;
}

std::string compiled_text(const TryBinary& b) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed;
  os << b.arch << ", NVRTC " << b.nvrtc << ", ";
  if (b.from_cache)
    os << "from the cache";
  else
    os << b.seconds << " s";
  if (!b.cache_note.empty()) os << "; " << b.cache_note;
  return os.str();
}

}  // namespace laptime::lab
