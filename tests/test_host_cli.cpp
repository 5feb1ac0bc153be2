// The `laptime` executable's own command line (cli/host_cli.h, cli/gpu_module.h), in both
// builds: the trace subcommands parse here, the GPU ones go to the module by their first word;
// --help lists all; and the executable maps no CUDA library until a GPU subcommand runs (the
// dynamic loader's own record, LD_DEBUG=libs, is what is checked). In the host-only build the
// GPU subcommands say in one sentence that they need the CUDA build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "cli/host_cli.h"
#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"

namespace laptime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::run_shell;
using trace::testing_support::fixture;

const std::string kLaptime = LAPTIME_BINARY;

std::string parse_error(const std::vector<std::string>& args) {
  try {
    parse_host_command_line(args);
  } catch (const CommandLineError& e) {
    return e.what();
  }
  return "(no error)";
}

// The CUDA libraries laptime's GPU half links; none may be loaded for the trace subcommands.
const std::regex kCudaLibrary(R"(lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|cupti|nvrtc|nvToolsExt)\.so)");

// The libraries the dynamic loader opened while running `args` (LD_DEBUG=libs), one per line.
std::string libraries_loaded(const std::string& args) {
  const auto r = run_shell("env LD_DEBUG=libs " + kLaptime + " " + args + " 2>&1 >/dev/null | grep 'calling init:'");
  return r.out;
}

TEST(HostCli, TraceSubcommandsParseHere) {
  const HostCommand a = parse_host_command_line({"analyze", "t.sqlite", "--skip-warmup", "2", "--json", "-"});
  EXPECT_EQ(a.kind, HostCommand::Kind::Analyze);
  EXPECT_EQ(a.analyze.file, "t.sqlite");
  EXPECT_EQ(a.analyze.report.skip_warmup, 2);
  EXPECT_EQ(a.analyze.json, "-");
  const HostCommand d = parse_host_command_line({"diff", "a.sqlite", "b.sqlite", "--threshold", "5"});
  EXPECT_EQ(d.kind, HostCommand::Kind::Diff);
  EXPECT_EQ(d.diff.before, "a.sqlite");
  EXPECT_EQ(d.diff.diff.threshold_pct, 5);
  const HostCommand k = parse_host_command_line({"kernels", "a.csv", "b.csv", "--by", "block"});
  EXPECT_EQ(k.kind, HostCommand::Kind::Kernels);
  EXPECT_EQ(k.kernels.reports.size(), 2u);
  EXPECT_EQ(parse_host_command_line({"kernels", "--command", "gpt2", "-b", "1"}).kernels.ncu.batch, 1);
}

TEST(HostCli, GpuSubcommandsAreHandedOnByTheirFirstWord) {
  for (const char* word : {"bench", "forward", "peak"})
    EXPECT_EQ(parse_host_command_line({word, "--not-an-option-here"}).kind, HostCommand::Kind::Gpu) << word;
  // The word must be the subcommand itself, not a value that happens to read "bench".
  EXPECT_EQ(parse_host_command_line({"analyze", "bench"}).kind, HostCommand::Kind::Analyze);
}

TEST(HostCli, ErrorsAreOneSentence) {
  EXPECT_EQ(parse_error({"anlyze", "x"}),
            "unknown command 'anlyze': choose one of bench, forward, analyze, diff, kernels, "
            "scrub, peak, lab. "
            "Run `laptime --help` for usage.");
  EXPECT_THAT(parse_error({"analyze", "x", "--gap-us", "nan"}),
              HasSubstr("--gap-us must be a positive number, got 'nan'."));
  EXPECT_THAT(parse_error({"diff", "only-one"}), HasSubstr("Run `laptime --help` for usage."));
}

TEST(HostCli, HelpListsEveryCommandAndLoadsNoCudaLibrary) {
  const auto r = run_shell(kLaptime + " --help 2>&1");
  EXPECT_EQ(r.status, 0);
  for (const char* word : {"bench", "forward", "analyze", "diff", "kernels", "scrub", "peak"})
    EXPECT_THAT(r.out, HasSubstr(word));
  const std::string libs = libraries_loaded("--help");
  ASSERT_THAT(libs, HasSubstr("libstdc++")) << "LD_DEBUG=libs reported nothing: the check below would prove nothing";
  EXPECT_FALSE(std::regex_search(libs, kCudaLibrary)) << libs;
}

TEST(HostCli, AnalyzeAndDiffLoadNoCudaLibrary) {
  const std::string trace = fixture("synthetic_trace.sqlite");
  for (const std::string& args : {"analyze " + trace, "diff " + trace + " " + trace}) {
    const std::string libs = libraries_loaded(args);
    ASSERT_THAT(libs, HasSubstr("libsqlite3")) << args;
    EXPECT_FALSE(std::regex_search(libs, kCudaLibrary)) << args << "\n" << libs;
  }
}

#ifdef LAPTIME_HOST_ONLY
TEST(HostCli, GpuSubcommandsSayTheyNeedTheCudaBuild) {
  for (const std::string word : {"bench", "forward", "peak"}) {
    const auto r = run_shell(kLaptime + " " + word + " gpt2 2>&1");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "laptime: laptime " + word +
                         " needs the CUDA build of laptime: this one was built without the CUDA toolkit "
                         "(LAPTIME_CUDA=OFF), so it runs analyze, diff and kernels only.\n");
  }
}
#else
TEST(HostCli, GpuSubcommandsLoadTheModule) {
  // `bench --help` is the module's parser speaking: its options are known only there.
  const auto r = run_shell(kLaptime + " bench --help 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--pitfall"));
  const std::string libs = libraries_loaded("bench --help");
  EXPECT_THAT(libs, HasSubstr("liblaptime_gpu.so"));
  EXPECT_TRUE(std::regex_search(libs, kCudaLibrary)) << "the check above could not see a CUDA library:\n" << libs;
}
#endif

}  // namespace
}  // namespace laptime
