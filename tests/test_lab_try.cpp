// A learner's own kernel file in laptime lab (kernels/lab/try_signature.h, try_compile.h,
// user_kernel.h; bench/lab/try_run.h, try_child.h, kernel_files.h).
//
// Without a GPU (CI): every template compiles with NVRTC for sm_90 and sm_80 in each precision of
// its kernel, warning-free, with the entry points and parameter kinds the lab looks up (the PTX);
// a wrong signature, a missing extern "C" and a syntax error are each the lab's sentence or the
// compiler's own words; the cache is keyed by content; the CUDA headers' search order; SHA-256;
// the child process reports a result, an exception, a hang past its timeout, a death and a run
// past its limit, and is reaped.
// With a GPU (skips without one): the templates of layernorm, attention and quantize pass as
// rungs and are timed; the three wrong layernorms of kernels/lab/examples/wrong/ FAIL and are
// never timed; v2 beats the template; a hang, a fault, a bad launch shape, a huge launch and a
// write past the output are each that rung FAILED while the lab ends cleanly. (GPT-2 with
// --kernel layernorm=FILE.cu: test_lab_kernels' swap-in.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/lab/try_child.h"
#include "core/sha256.h"
#include "kernels/lab/gpu_wait.h"
#include "kernels/lab/registry.h"
#include "kernels/lab/try_compile.h"
#include "kernels/lab/try_signature.h"
#include "kernels/lab/try_template.h"
#include "tests/support/compare.h"
#include "tests/support/run_binary.h"

namespace laptime::lab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_support::run_shell;

TrySource source_of(const std::string& path, const std::string& text) { return {path, text, sha256_hex(text)}; }

// The last `from` replaced: the code's, not the header comment's (which shows the declarations).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.rfind(from);
  EXPECT_NE(at, std::string::npos) << "the template no longer holds: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A fresh folder under the test's temporary folder.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("laptime_lab_try_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The hostile files (kernels/lab/examples/hostile/): what a file must not do to the lab, each the
// layernorm template with one edit, and the words its FAILED rung must hold. device-call.sh lab-try
// runs the same files on the GPU.
struct Hostile {
  std::string name, from, to, why;
};
const std::vector<Hostile>& hostile_files() {
  static const std::string early = "  if (row >= rows) return;\n";
  static const std::vector<Hostile> files{
      // A loop the compiler keeps: the sleep is a side effect (an empty loop on a volatile local was
      // removed as one without, and the rows past the end then wrote out of bounds).
      {"hang.cu", early, early + "  while (rows > 0) __nanosleep(1000);\n", "passed --timeout 2 s"},
      {"fault.cu", early, early + "  out[(long long)1 << 40] = in[0];\n", "compute-sanitizer --tool memcheck"},
      {"bad_shape.cu", "s.block = dim3(256);", "s.block = dim3(0);", "asked for a block of 0 x 1 x 1"},
      {"huge_launch.cu", "s.grid = dim3(ceil_div(rows, 256));", "s.grid = dim3(2147483647u, 65535u);",
       "passed --timeout 2 s"},
      {"stray_write.cu", "y[c] = to_scalar(", "y[c + C] = to_scalar(", "wrote past the end"},
  };
  return files;
}

fs::path hostile_path(const std::string& name) {
  return fs::path(LAPTIME_SOURCE_DIR) / "kernels" / "lab" / "examples" / "hostile" / name;
}

// --- the templates, compiled (no GPU) -----------------------------------------------------------

TEST(TryTemplates, EveryTemplateCompilesForSm90AndSm80InEachPrecision) {
  ASSERT_FALSE(find_cuda_include_dir().dir.empty()) << "no CUDA headers here: the templates cannot compile";
  for (const TrySignature& s : try_signatures()) {
    const KernelInfo* k = find_kernel(s.kernel);
    ASSERT_NE(k, nullptr) << s.kernel;
    for (const std::string& precision : k->precisions)
      for (const char* arch : {"sm_90", "sm_80"}) {
        SCOPED_TRACE(s.kernel + " " + precision + " " + arch);
        const TryBinary b = compile_try(s, source_of(s.kernel + ".cu", template_text(s.kernel)), precision, arch, "");
        EXPECT_TRUE(b.compiled) << b.problem << "\n" << b.log;
        EXPECT_EQ(b.log, "") << "a template compiles without a warning";
        EXPECT_FALSE(b.cubin.empty());
      }
  }
}

TEST(TryTemplates, EveryKernelTheModelsRunHasOne) {
  for (const char* name : {"layernorm", "bias_gelu", "attention", "embedding", "residual", "residual_layernorm",
                           "quantize", "amax", "maxpool", "avgpool", "conv_epilogue", "stem"})
    EXPECT_NE(find_try_signature(name), nullptr) << name;
  for (const KernelInfo& k : kernels())
    for (const ModelUse& m : k.models)
      if (m.swappable) {
        EXPECT_NE(find_try_signature(k.name), nullptr) << k.name << " is swapped into " << m.model;
      }
}

// The file says what the lab calls and what each argument holds, from the one table.
TEST(TryTemplates, TheTemplateNamesEveryArgument) {
  for (const TrySignature& s : try_signatures()) {
    const std::string t = template_text(s.kernel);
    EXPECT_THAT(t, HasSubstr(s.kernel_declaration())) << s.kernel;
    EXPECT_THAT(t, HasSubstr(s.launch_declaration())) << s.kernel;
    for (const TryParam& p : s.params) EXPECT_THAT(t, HasSubstr(p.meaning)) << s.kernel << " " << p.name;
    EXPECT_THAT(t, HasSubstr("laptime lab " + s.kernel + " --try")) << s.kernel;
  }
  EXPECT_THAT(template_text("layernorm"), HasSubstr("laptime bench gpt2 --kernel layernorm=THIS.cu"));
}

// docs/KERNELS.md's table of signatures is the one table's, word for word.
TEST(TryTemplates, TheDocsListEverySignature) {
  const std::string docs = read_file(std::string(LAPTIME_SOURCE_DIR) + "/docs/KERNELS.md");
  for (const TrySignature& s : try_signatures()) {
    const std::string k = s.kernel_declaration(), l = s.launch_declaration();
    EXPECT_THAT(docs, HasSubstr("`" + k.substr(k.find("void ") + 5) + "`")) << s.kernel;
    EXPECT_THAT(docs, HasSubstr("`" + l.substr(l.find("LaunchShape ") + 12) + "`")) << s.kernel;
  }
}

// Each committed hostile file is today's template with its one edit, so a change to the template
// cannot leave them testing something else (regenerate: the edit in hostile_files() applied to
// `laptime lab layernorm --template`).
TEST(TryTemplates, TheHostileFilesAreTheTemplateWithOneEditEach) {
  const std::string t = template_text("layernorm");
  for (const Hostile& h : hostile_files()) {
    SCOPED_TRACE(h.name);
    EXPECT_EQ(read_file(hostile_path(h.name)), replaced(t, h.from, h.to))
        << "kernels/lab/examples/hostile/" << h.name << " is not the layernorm template with its edit";
  }
}

TEST(TryCompile, AWrongSignatureIsACompileErrorNamingTheExpectedOne) {
  const TrySignature& s = *find_try_signature("layernorm");
  const std::string text =
      replaced(template_text("layernorm"), "int rows, int C, float eps) {", "int rows, int C, double eps) {");
  const TryBinary b = compile_try(s, source_of("mine.cu", text), "bf16", "sm_90", "");
  EXPECT_FALSE(b.compiled);
  EXPECT_THAT(b.log, HasSubstr("laptime-lab-signature("));
  EXPECT_THAT(b.log,
              HasSubstr("the lab calls extern \"C\" __global__ void layernorm(scalar_t* out, const scalar_t* in, "
                        "const scalar_t* weight, const scalar_t* bias, int rows, int C, float eps)"));
  const std::string launch = replaced(template_text("layernorm"), "layernorm_launch(int rows, int C, int sms)",
                                      "layernorm_launch(int rows, int C)");
  EXPECT_THAT(compile_try(s, source_of("mine.cu", launch), "bf16", "sm_90", "").log,
              HasSubstr("__device__ LaunchShape layernorm_launch(int rows, int C, int sms)"));
}

TEST(TryCompile, WithoutExternCTheCxxNameIsNamed) {
  const TrySignature& s = *find_try_signature("layernorm");
  const std::string text =
      replaced(template_text("layernorm"), "extern \"C\" __global__ void layernorm(", "__global__ void layernorm(");
  const TryBinary b = compile_try(s, source_of("mine.cu", text), "bf16", "sm_90", "");
  EXPECT_FALSE(b.compiled);
  EXPECT_THAT(b.problem, HasSubstr("mine.cu compiles layernorm under its C++ name _Z"));
  EXPECT_THAT(b.problem, HasSubstr("declare it extern \"C\" __global__"));
}

TEST(TryCompile, ACompileErrorIsTheCompilersOwnWordsAtTheFilesLine) {
  const TrySignature& s = *find_try_signature("layernorm");
  std::string text = template_text("layernorm");
  const size_t at = text.find("  double sum = 0;");
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  text.insert(at, "  this is not C++;\n");
  const TryBinary b = compile_try(s, source_of("dir/mine.cu", text), "fp32", "sm_90", "");
  EXPECT_FALSE(b.compiled);
  EXPECT_THAT(b.log, HasSubstr("dir/mine.cu(" + std::to_string(line) + "): error"));
  EXPECT_EQ(b.problem, "");  // the compiler said it all
}

TEST(TryCompile, TheBinaryIsCachedByContent) {
  const fs::path cache = fresh_folder("cache");
  const TrySignature& s = *find_try_signature("residual");
  const TrySource src = source_of("r.cu", template_text("residual"));
  const TryBinary first = compile_try(s, src, "bf16", "sm_90", cache.string());
  ASSERT_TRUE(first.compiled);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(fs::exists(first.cache_file)) << first.cache_note;
  const TryBinary again = compile_try(s, src, "bf16", "sm_90", cache.string());
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_EQ(again.cache_file, first.cache_file);
  // Another byte, precision or architecture: another key.
  EXPECT_NE(compile_try(s, source_of("r.cu", src.text + " "), "bf16", "sm_90", cache.string()).cache_file,
            first.cache_file);
  EXPECT_NE(compile_try(s, src, "fp32", "sm_90", cache.string()).cache_file, first.cache_file);
  EXPECT_NE(compile_try(s, src, "bf16", "sm_80", cache.string()).cache_file, first.cache_file);
  // A file of its own #included: never cached (the key cannot see that file).
  write_file(cache / "helper.h", "#define HELPER 1\n");
  const TryBinary own = compile_try(s, source_of((cache / "r.cu").string(), "#include \"helper.h\"\n" + src.text),
                                    "bf16", "sm_90", cache.string());
  EXPECT_TRUE(own.compiled) << own.log;
  EXPECT_EQ(own.cache_file, "");
  EXPECT_THAT(own.cache_note, HasSubstr("#includes a file of its own"));
  for (const auto& e : fs::directory_iterator(cache))  // no temporary left beside the binaries
    EXPECT_TRUE(e.path().extension() == ".cubin" || e.path().filename() == "helper.h") << e.path();
  fs::remove_all(cache);
}

TEST(TryCompile, TheCudaHeadersAreFoundInTheDocumentedOrder) {
  const char* old = std::getenv("CUDA_HOME");
  const std::string saved = old ? old : "";
  const fs::path home = fresh_folder("cuda_home");
  fs::create_directories(home / "include");
  setenv("CUDA_HOME", home.string().c_str(), 1);
  CudaIncludeDir none = find_cuda_include_dir();
  EXPECT_EQ(none.tried.front(), (home / "include").string());  // first place looked, no headers there
  EXPECT_NE(none.dir, (home / "include").string());
  write_file(home / "include" / "cuda_bf16.h", "");
  EXPECT_EQ(find_cuda_include_dir().dir, (home / "include").string());
  if (old)
    setenv("CUDA_HOME", saved.c_str(), 1);
  else
    unsetenv("CUDA_HOME");
  fs::remove_all(home);
}

TEST(TryCompile, ArchitectureForTheCard) {
  EXPECT_EQ(try_arch(9, 0), "sm_90a");
  EXPECT_EQ(try_arch(8, 0), "sm_80");
  EXPECT_EQ(try_arch(8, 9), "sm_89");
  EXPECT_EQ(std::string(kNoGpuArch), "sm_90a");
}

TEST(ContentHash, Sha256KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // The padding's edges: 55, 56 and 64 bytes (one block, two blocks, one full block).
  std::string bytes;
  for (int i = 0; i < 64; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(sha256_hex(bytes.substr(0, 55)), "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59");
  EXPECT_EQ(sha256_hex(bytes.substr(0, 56)), "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562");
  EXPECT_EQ(sha256_hex(bytes), "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108");
}

// --- the child process (no GPU: the work only announces waits) --------------------------------

TEST(TryChild, ReportsItsResult) {
  const ChildEnd e = run_in_child([] { return nlohmann::json{{"answer", 42}}; }, 5, 30);
  EXPECT_EQ(e.how, ChildEnd::How::Reported);
  EXPECT_EQ(e.result["answer"], 42);
}

TEST(TryChild, AnExceptionIsItsSentence) {
  const ChildEnd e = run_in_child([]() -> nlohmann::json { throw Error("it broke."); }, 5, 30);
  EXPECT_EQ(e.how, ChildEnd::How::Reported);
  EXPECT_EQ(e.result["error"], "it broke.");
}

TEST(TryChild, AWaitPastTheTimeoutIsStopped) {
  const auto t0 = std::chrono::steady_clock::now();
  const ChildEnd e = run_in_child(
      [] {
        watch_phase("the check at rows=37 C=771");
        announced_wait([] {
          std::this_thread::sleep_for(std::chrono::seconds(60));
          return cudaSuccess;
        });
        return nlohmann::json{};
      },
      0.5, 30);
  EXPECT_EQ(e.how, ChildEnd::How::TimedOut);
  EXPECT_EQ(e.phase, "the check at rows=37 C=771");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  // Host work outside a wait is not timed by --timeout: it finishes.
  const ChildEnd slow = run_in_child(
      [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
        return nlohmann::json{{"done", true}};
      },
      0.2, 30);
  EXPECT_EQ(slow.how, ChildEnd::How::Reported);
}

TEST(TryChild, ADeathIsNamedWithItsSignal) {
  const ChildEnd e = run_in_child(
      []() -> nlohmann::json {
        std::raise(SIGSEGV);
        return {};
      },
      5, 30);
  EXPECT_EQ(e.how, ChildEnd::How::Died);
  EXPECT_THAT(e.why, HasSubstr("signal 11"));
  const ChildEnd quiet = run_in_child([]() -> nlohmann::json { _exit(7); }, 5, 30);
  EXPECT_EQ(quiet.how, ChildEnd::How::Died);
  EXPECT_THAT(quiet.why, HasSubstr("exit status 7"));
}

TEST(TryChild, PastItsLimitItIsStoppedAndReaped) {
  const ChildEnd e = run_in_child(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(60));
        return nlohmann::json{};
      },
      5, 0.5);
  EXPECT_EQ(e.how, ChildEnd::How::Stopped);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child was left unreaped";
}

// --- on the GPU: the binary, as a learner runs it ------------------------------------------------

std::string laptime() { return LAPTIME_BINARY; }
std::string example(const std::string& name) {
  return std::string(LAPTIME_SOURCE_DIR) + "/kernels/lab/examples/" + name;
}

struct LabRun {
  testing_support::RunResult run;
  nlohmann::json report;
  const nlohmann::json* rung(const std::string& id) const {
    for (const nlohmann::json& v : report["versions"])
      if (v["id"] == id) return &v;
    return nullptr;
  }
};

// `laptime lab KERNEL ARGS --json FILE` in `dir`, its report read back.
LabRun lab(const fs::path& dir, const std::string& kernel, const std::string& args) {
  LabRun r;
  const fs::path json = dir / ("report_" + std::to_string(std::random_device{}()) + ".json");
  r.run = run_shell("env LAPTIME_CACHE_DIR=" + (dir / "cache").string() + " " + laptime() + " lab " + kernel + " " +
                    args + " --json " + json.string() + " 2>&1");
  if (fs::exists(json)) r.report = nlohmann::json::parse(read_file(json));
  return r;
}

class TryOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    dir = fresh_folder("gpu");
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  fs::path dir;
};

TEST_F(TryOnGpu, TheTemplatesOfLayernormAttentionAndQuantizePassAndAreTimed) {
  for (const char* kernel : {"layernorm", "attention", "quantize"}) {
    SCOPED_TRACE(kernel);
    const std::string file = write_file(dir / (std::string(kernel) + ".cu"), template_text(kernel));
    const LabRun r = lab(dir, kernel, "--try " + file);
    EXPECT_EQ(r.run.status, 0) << r.run.out;
    const nlohmann::json* rung = r.rung(std::string(kernel) + ".cu");
    ASSERT_NE(rung, nullptr) << r.run.out;
    EXPECT_EQ((*rung)["status"], "passed") << rung->dump(2);
    EXPECT_FALSE((*rung)["timings"].empty());
    EXPECT_EQ((*rung)["file"]["sha256"], sha256_hex(template_text(kernel)));
    for (const nlohmann::json& t : (*rung)["timings"]) {
      EXPECT_GT(t["median_us"].get<double>(), 0);
      EXPECT_GT(t["hot"]["median_us"].get<double>(), 0);
      EXPECT_TRUE(t["vs_production"].is_number());
    }
  }
}

TEST_F(TryOnGpu, TheWrongLayernormsFailAndAreNeverTimed) {
  const std::vector<std::pair<std::string, std::string>> wrong{
      {"layernorm_off_by_one_row.cu", "wrote past the end of an output"},
      {"layernorm_unwritten_tail.cu", "is NaN (never written"},
      {"layernorm_race.cu", "worst ["}};
  std::string args = "--versions v1";
  for (const auto& [file, why] : wrong) args += " --try " + example("wrong/" + file);
  const LabRun r = lab(dir, "layernorm", args);
  EXPECT_EQ(r.run.status, 1) << r.run.out;
  for (const auto& [file, why] : wrong) {
    const nlohmann::json* rung = r.rung(file);
    ASSERT_NE(rung, nullptr) << file << "\n" << r.run.out;
    EXPECT_EQ((*rung)["status"], "FAILED") << file;
    EXPECT_TRUE((*rung)["timings"].empty()) << file;
    std::string details;
    for (const nlohmann::json& c : (*rung)["checks"]) details += c["detail"].get<std::string>() + "\n";
    EXPECT_THAT(details, HasSubstr(why)) << file;
  }
  EXPECT_EQ((*r.rung("v1"))["status"], "passed");  // the ladder ran on beside them
}

TEST_F(TryOnGpu, V2BeatsTheTemplate) {
  const std::string v1 = write_file(dir / "layernorm_v1.cu", template_text("layernorm"));
  const LabRun r = lab(dir, "layernorm", "--versions none --try " + v1 + " --try " + example("layernorm_v2.cu"));
  ASSERT_EQ(r.run.status, 0) << r.run.out;
  const double t1 = (*r.rung("layernorm_v1.cu"))["timings"][0]["median_us"].get<double>();
  const double t2 = (*r.rung("layernorm_v2.cu"))["timings"][0]["median_us"].get<double>();
  EXPECT_LT(t2, t1) << "v2 " << t2 << " µs, the template " << t1 << " µs";
}

// --once (the profilers' and the sanitizer's run: the file in the lab's own process) says how the
// file was compiled as the timed run does (it once said "compiled for " and nothing).
TEST_F(TryOnGpu, OnceSaysHowTheFileWasCompiled) {
  const std::string file = write_file(dir / "layernorm.cu", template_text("layernorm"));
  const LabRun r = lab(dir, "layernorm", "--versions none --once --try " + file);
  ASSERT_EQ(r.run.status, 0) << r.run.out;
  const nlohmann::json* rung = r.rung("layernorm.cu");
  ASSERT_NE(rung, nullptr) << r.run.out;
  EXPECT_THAT((*rung)["file"]["compiled"].get<std::string>(), HasSubstr(", NVRTC ")) << rung->dump(2);
  EXPECT_THAT(r.run.out, testing::ContainsRegex("compiled for sm_[0-9]+a?, NVRTC ")) << r.run.out;
}

// Each misbehaviour of a file: that rung FAILED with a sentence, the lab's process ends cleanly
// (exit 1, in well under the test's limit), no temporary left in the cache.
TEST_F(TryOnGpu, HangsFaultsBadShapesHugeLaunchesAndStrayWritesAreEachOneRungFailed) {
  for (const Hostile& h : hostile_files()) {
    const std::string& name = h.name;
    SCOPED_TRACE(name);
    const std::string file = hostile_path(name).string();
    const auto t0 = std::chrono::steady_clock::now();
    const LabRun r = lab(dir, "layernorm", "--versions none --timeout 2 --try " + file);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 50);
    EXPECT_EQ(r.run.status, 1) << r.run.out;
    const nlohmann::json* rung = r.rung(name);
    ASSERT_NE(rung, nullptr) << r.run.out;
    EXPECT_EQ((*rung)["status"], "FAILED");
    EXPECT_TRUE((*rung)["timings"].empty());
    std::string details;
    for (const nlohmann::json& c : (*rung)["checks"]) details += c["detail"].get<std::string>() + "\n";
    EXPECT_THAT(details, HasSubstr(h.why));
    for (const auto& e : fs::directory_iterator(dir / "cache" / "nvrtc")) EXPECT_EQ(e.path().extension(), ".cubin");
  }
}

}  // namespace
}  // namespace laptime::lab
