// The `laptime` executable's own command line (cli/host_cli.h, cli/gpu_module.h), in both
// builds: the trace subcommands parse here, the GPU ones go to the module by their first word;
// --help lists all; and the executable maps no CUDA library until a GPU subcommand runs (the
// dynamic loader's own record, LD_DEBUG=libs, is what is checked). In the host-only build the
// GPU subcommands say in one sentence that they need the CUDA build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <string>

#include "cli/commands.h"
#include "cli/help.h"
#include "cli/host_cli.h"
#include "tests/support/help_testing.h"
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
  for (const CommandInfo& c : kCommands) {
    if (c.side == Side::Gpu) {
      EXPECT_EQ(parse_host_command_line({c.name, "--not-an-option-here"}).kind, HostCommand::Kind::Gpu) << c.name;
    }
  }
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
  EXPECT_EQ(parse_error({"diff", "only-one"}), "AFTER is required. Run `laptime diff --help` for usage.");
}

// Help as a profiler's user expects it: `Usage: laptime CMD ...`, options under headings,
// examples, wrapped to 80 columns when standard output is no terminal (a test, a pipe).
TEST(HostCli, EachTraceCommandsHelpReadsTheSameWay) {
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Host) continue;
    const auto r = run_shell("env -u COLUMNS " + kLaptime + " " + c.name + " --help 2>&1");
    EXPECT_EQ(r.status, 0) << r.out;
    testing_support::expect_command_help(c, r.out, 80);
  }
  // The headings the trace commands use, in cli/help.h's order.
  const std::string analyze = run_shell("env -u COLUMNS " + kLaptime + " analyze --help").out;
  size_t at = 0;
  for (const char* heading : {"\nArguments:\n", "\nInput:\n", "\nSelection:\n", "\nThresholds:\n", "\nOutput:\n",
                              "\nJob view (several reports):\n", "\nExamples:\n"}) {
    const size_t next = analyze.find(heading, at);
    EXPECT_NE(next, std::string::npos) << heading << analyze;
    at = next == std::string::npos ? at : next;
  }
  EXPECT_THAT(analyze, HasSubstr("Usage: laptime analyze [OPTIONS] TRACE...\n"));
  EXPECT_THAT(run_shell(kLaptime + " diff --help").out, HasSubstr("Usage: laptime diff [OPTIONS] BEFORE AFTER\n"));
}

// $COLUMNS sets the width (clamped to 40..120); every line but the examples fits it.
TEST(HostCli, HelpWrapsToTheWidthAsked) {
  std::mt19937 rng(std::random_device{}());
  for (int width : {40, 57, 100, static_cast<int>(40 + rng() % 81)}) {
    for (const CommandInfo& c : kCommands) {
      if (c.side != Side::Host) continue;
      const auto r = run_shell("env COLUMNS=" + std::to_string(width) + " " + kLaptime + " " + c.name + " --help");
      testing_support::expect_command_help(c, r.out, static_cast<size_t>(width));
    }
    for (const std::string& line :
         testing_support::lines_of(run_shell("env COLUMNS=" + std::to_string(width) + " " + kLaptime + " --help").out))
      EXPECT_LE(testing_support::display_columns(line), static_cast<size_t>(width)) << line;
  }
  // A wide terminal is used, up to 120 columns; a narrow one no narrower than 40.
  size_t widest = 0;
  for (const std::string& line :
       testing_support::lines_of(run_shell("env COLUMNS=500 " + kLaptime + " analyze --help").out))
    widest = std::max(widest, testing_support::display_columns(line));
  EXPECT_GT(widest, 100u);
  EXPECT_LE(widest, 120u);
  setenv("COLUMNS", "12", 1);
  EXPECT_EQ(cli::help_width(), 40);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(cli::help_width(), 80);  // not a number: as without it (this test's output is no terminal)
  unsetenv("COLUMNS");
}

TEST(HostCli, WrapBreaksAtWordsAndKeepsLongWordsWhole) {
  EXPECT_EQ(cli::wrap("aa bb cc", 5, 2, 0), "aa bb\n  cc");
  EXPECT_EQ(cli::wrap("one\ntwo three", 9, 1, 0), "one\n two\n three");
  EXPECT_EQ(cli::wrap("a averyveryverylongword b", 8, 0, 0), "a\naveryveryverylongword\nb");
  EXPECT_EQ(cli::wrap("±1 ±2", 5, 0, 0), "±1 ±2");  // ± is one column
}

// A usage error names the command's own help; a line with no command names the program's.
TEST(HostCli, UsageErrorsPointToTheCommandsHelp) {
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Host) continue;
    EXPECT_THAT(parse_error({c.name, "--no-such-flag"}),
                HasSubstr(std::string("Run `laptime ") + c.name + " --help` for usage."));
  }
  EXPECT_THAT(parse_error({"--no-such-flag"}), ::testing::EndsWith(". Run `laptime --help` for usage."));
  EXPECT_THAT(parse_error({}), ::testing::EndsWith(". Run `laptime --help` for usage."));
  EXPECT_EQ(parse_error({"kernels", "--", "a", "b", "c"}),
            "laptime kernels reads one report, or two to compare, not 3. Run `laptime kernels --help` for usage.");
  const auto r = run_shell(kLaptime + " analyze 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "laptime: TRACE is required. Run `laptime analyze --help` for usage.\n");
}

// Each example in a command's help is a command line the parser takes.
TEST(HostCli, EveryExampleParses) {
  for (const CommandInfo& c : kCommands) {
    for (const std::vector<std::string>& args : testing_support::laptime_examples(c)) {
      std::string line;
      for (const std::string& a : args) line += " " + a;
      ASSERT_FALSE(args.empty());
      EXPECT_EQ(args[0], c.name) << line;  // a command's examples run that command
      if (c.side == Side::Gpu) {
        EXPECT_EQ(parse_host_command_line(args).kind, HostCommand::Kind::Gpu) << line;
        continue;  // test_cli parses it with the module's parser
      }
      EXPECT_EQ(parse_error(args), "(no error)") << line;
    }
  }
}

TEST(HostCli, HelpListsEveryCommandAndLoadsNoCudaLibrary) {
  const auto r = run_shell(kLaptime + " --help 2>&1");
  EXPECT_EQ(r.status, 0);
  // Each command of the table under its side's heading: the trace commands first, then the GPU ones.
  const size_t trace = r.out.find("\nTrace commands"), gpu = r.out.find("\nGPU commands");
  ASSERT_NE(trace, std::string::npos) << r.out;
  ASSERT_NE(gpu, std::string::npos) << r.out;
  for (const CommandInfo& c : kCommands) {
    const size_t at = r.out.find(std::string("\n  ") + c.name + " ");
    ASSERT_NE(at, std::string::npos) << c.name;
    EXPECT_EQ(at > gpu, c.side == Side::Gpu) << c.name;
    EXPECT_GT(at, trace) << c.name;
  }
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
  // The sentence names every command this build runs: each Host row of the table.
  std::string host;
  for (const CommandInfo& c : kCommands)
    if (c.side == Side::Host) host += std::string(host.empty() ? "" : ", ") + c.name;
  host.replace(host.rfind(", "), 2, " and ");
  EXPECT_EQ(host, "analyze, diff, kernels and scrub");  // as the table reads today
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Gpu) continue;
    const std::string word = c.name;
    const auto r = run_shell(kLaptime + " " + word + " gpt2 2>&1");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "laptime: laptime " + word +
                         " needs the CUDA build of laptime: this one was built without the CUDA toolkit "
                         "(LAPTIME_CUDA=OFF), so it runs " +
                         host + " only.\n");
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
