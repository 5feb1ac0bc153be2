// The laptime command line, host only: parsing, defaults, and the one-sentence errors for
// bad input. The last tests run the real binary, so exit codes and stderr are checked too
// (on a machine without a GPU, the no-GPU message itself is under test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/gpu_cli.h"
#include "cli/host_cli.h"
#include "bench/interrupt.h"
#include "bench/stats.h"
#include "core/check.h"
#include "core/cli_numbers.h"
#include "core/stats.h"
#include "tests/support/help_testing.h"

namespace laptime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Any command line, parsed by the half that parses it: the GPU module's parser for bench, forward
// and peak, the executable's for the trace commands (cli/commands.h).
struct Parsed : Command {
  AnalyzeOptions analyze;
  DiffCommandOptions diff;
  KernelsOptions kernels;
};

Parsed parse(std::vector<std::string> args) {
  Parsed p;
  if (args.empty() || !is_gpu_command(args[0])) {
    HostCommand h = parse_host_command_line(args);
    p.analyze = std::move(h.analyze);
    p.diff = std::move(h.diff);
    p.kernels = std::move(h.kernels);
    p.help_text = std::move(h.help_text);
    return p;
  }
  static_cast<Command&>(p) = parse_command_line(args);
  return p;
}

// The sentence either parser refuses the line with (Error from the module's, CommandLineError
// from the executable's).
std::string parse_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const Error& e) {
    return e.what();
  } catch (const CommandLineError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cli, BenchDefaults) {
  const Command c = parse({"bench", "gpt2"});
  ASSERT_EQ(c.kind, Command::Kind::Bench);
  EXPECT_EQ(c.bench.workload.model, "gpt2");
  EXPECT_EQ(c.bench.workload.precision, Precision::BF16);
  EXPECT_TRUE(c.bench.workload.weights.empty());  // seeded random weights
  EXPECT_EQ(c.bench.nvtx, NvtxLevel::Layer);
  EXPECT_EQ(c.bench.graph, GraphMode::Eager);
  EXPECT_EQ(c.bench.stream, StreamKind::Created);
  EXPECT_EQ(c.bench.pitfall, Pitfall::None);
  EXPECT_EQ(c.bench.warmup, 5);
  EXPECT_EQ(c.bench.iters, 20);
}

TEST(Cli, BenchFlags) {
  const Command c = parse({"bench", "resnet50", "--batch", "3", "--image-size", "160", "--precision", "fp32", "--nvtx",
                           "none", "--graph", "--warmup", "0", "--iters", "7", "--device", "1", "--json", "out.json"});
  EXPECT_EQ(c.bench.workload.model, "resnet50");
  EXPECT_EQ(c.bench.workload.batch, 3);
  EXPECT_EQ(c.bench.workload.image_size, 160);
  EXPECT_EQ(c.bench.workload.precision, Precision::FP32);
  EXPECT_EQ(c.bench.nvtx, NvtxLevel::None);
  EXPECT_EQ(c.bench.graph, GraphMode::Graph);
  EXPECT_EQ(c.bench.warmup, 0);
  EXPECT_EQ(c.bench.iters, 7);
  EXPECT_EQ(c.bench.device, 1);
  EXPECT_EQ(c.bench.json, "out.json");
  EXPECT_EQ(parse({"bench", "gpt2", "--pitfall", "pageable", "--stream", "default"}).bench.pitfall, Pitfall::Pageable);
  EXPECT_EQ(parse({"bench", "gpt2", "--stream", "default"}).bench.stream, StreamKind::Legacy);
  EXPECT_EQ(parse({"bench", "gpt2", "-p", "fp8"}).bench.workload.precision, Precision::FP8);
  EXPECT_EQ(parse({"bench", "resnet50", "-p", "fp8", "--stem", "fused"}).bench.workload.stem, StemKind::Fused);
}

// fp8's calibration batch: `forward --calibrate FILE`, checked like any input, and fp8's alone.
TEST(Cli, ForwardCalibrate) {
  const std::string tokens = std::string(LAPTIME_SOURCE_DIR) + "/CMakeLists.txt";  // any existing file
  const Command c = parse({"forward", "gpt2", "--tokens", tokens, "--calibrate", tokens, "-p", "fp8", "-o", "x.bin"});
  EXPECT_EQ(c.forward.calibrate, tokens);
  EXPECT_THAT(parse_error({"forward", "gpt2", "--tokens", tokens, "--calibrate", tokens, "-o", "x.bin"}),
              HasSubstr("--calibrate applies to -p fp8 only."));
  EXPECT_THAT(parse_error({"forward", "gpt2", "--tokens", tokens, "--calibrate", "/nonexistent/c.bin", "-p", "fp8",
                           "-o", "x.bin"}),
              HasSubstr("/nonexistent/c.bin"));
}

TEST(Cli, KernelsParsesReportsAndTheCommand) {
  const HostCommand k =
      parse_host_command_line({"kernels", "a.csv", "b.ncu-rep", "--by", "block", "--domain", "default"});
  EXPECT_EQ(k.kind, HostCommand::Kind::Kernels);
  EXPECT_EQ(k.kernels.reports, (std::vector<std::string>{"a.csv", "b.ncu-rep"}));
  EXPECT_EQ(k.kernels.layers.by, trace::LayerKey::Block);
  EXPECT_EQ(k.kernels.layers.domain, "default");
  const HostCommand c =
      parse_host_command_line({"kernels", "--command", "resnet50", "-b", "8", "--stem", "cudnn", "--within", "conv1"});
  EXPECT_TRUE(c.kernels.command);
  EXPECT_EQ(c.kernels.ncu.model, "resnet50");
  EXPECT_EQ(c.kernels.ncu.batch, 8);
  EXPECT_EQ(c.kernels.ncu.within, "conv1");
  EXPECT_THAT(parse_error({"kernels", "--command", "bert"}), HasSubstr("bert not in {gpt2,resnet50,lab}"));
  EXPECT_THAT(parse_error({"kernels", "a", "b", "c"}), HasSubstr("Run `laptime kernels --help` for usage."));
  EXPECT_THAT(parse_error({"kernals"}), HasSubstr("kernels"));  // the unknown-command sentence lists it
}

TEST(Cli, HelpIsText) {
  const Command c = parse({"bench", "--help"});
  EXPECT_EQ(c.kind, Command::Kind::Help);
  EXPECT_THAT(c.help_text, HasSubstr("--precision"));
  EXPECT_THAT(c.help_text, HasSubstr("--graph"));
  EXPECT_THAT(parse({"--help"}).help_text, HasSubstr("bench"));
}

// The GPU commands' help reads as the trace commands' does (tests/support/help_testing.h): the
// module's parser lays it out with the same formatter (cli/help.h).
TEST(Cli, EachGpuCommandsHelpReadsTheSameWay) {
  setenv("COLUMNS", "80", 1);
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Gpu) continue;
    const Command h = parse_command_line({c.name, "--help"});
    EXPECT_EQ(h.kind, Command::Kind::Help) << c.name;
    testing_support::expect_command_help(c, h.help_text, 80);
    EXPECT_THAT(parse_error({c.name, "--no-such-flag"}),
                HasSubstr(std::string("Run `laptime ") + c.name + " --help` for usage."));
  }
  EXPECT_THAT(parse_command_line({"bench", "--help"}).help_text, HasSubstr("Usage: laptime bench [OPTIONS] MODEL\n"));
  unsetenv("COLUMNS");
}

// Each example of a GPU command is a line the module's parser takes (the files it names made
// empty in a folder of its own: the parser checks only that they are there).
TEST(Cli, EveryGpuExampleParses) {
  const std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "gpu_examples";
  std::filesystem::create_directories(folder);
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(folder);
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Gpu) continue;
    for (const std::vector<std::string>& args : testing_support::laptime_examples(c)) {
      for (const std::string& a : args)
        if (a.find(".bin") != std::string::npos || a.find(".safetensors") != std::string::npos) std::ofstream{a};
      std::string line;
      for (const std::string& a : args) line += " " + a;
      EXPECT_EQ(parse_error(args), "(no error)") << line;
    }
  }
  std::filesystem::current_path(before);
}

TEST(Cli, BadInputIsOneSentence) {
  EXPECT_THAT(parse_error({"bench", "gpt3"}), HasSubstr("gpt3 not in {gpt2,resnet50}"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--precision", "fp16"}), HasSubstr("fp16 not in"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--nvtx", "all"}), HasSubstr("all not in"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--batch", "0"}), HasSubstr("--batch"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--seq", "-3"}), HasSubstr("--seq"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--iters", "0"}), HasSubstr("--iters"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--batch", "eight"}), HasSubstr("--batch"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--frobnicate"}), HasSubstr("--frobnicate"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--weights", "/nonexistent/w.safetensors"}),
              HasSubstr("/nonexistent/w.safetensors"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--graph", "--stream", "default"}), HasSubstr("cannot be captured"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--graph", "--pitfall", "sync"}),
              HasSubstr("--pitfall cannot be combined"));
  EXPECT_THAT(parse_error({"forward", "gpt2", "--output", "x.bin"}), HasSubstr("needs --tokens"));
  EXPECT_THAT(parse_error({"frobnicate"}), HasSubstr("frobnicate"));
  EXPECT_THAT(parse_error({}), HasSubstr("subcommand"));
  for (const auto& args : {std::vector<std::string>{"bench", "gpt3"}, {"bench", "gpt2", "--batch", "0"}}) {
    const std::string msg = parse_error(args);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
    EXPECT_THAT(msg, HasSubstr("Run `laptime bench --help` for usage."));
  }
}

// GPT-2's attention core: parsed onto the enum, refused where it cannot run, host-side.
TEST(Cli, AttentionChoice) {
  EXPECT_EQ(parse({"bench", "gpt2"}).bench.workload.attention, AttentionKind::Auto);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "cudnn"}).bench.workload.attention, AttentionKind::Cudnn);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "naive", "-p", "fp32"}).bench.workload.attention,
            AttentionKind::Naive);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "cudnn", "-p", "tf32"}).bench.workload.attention,
            AttentionKind::Cudnn);
  EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "fast"}), HasSubstr("fast not in"));
  // flash runs in every precision (fp32 storage through kernels/flash_attention_f32.cu); its head
  // size is checked by the layer, where the weights are known.
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "flash", "-p", "tf32"}).bench.workload.attention,
            AttentionKind::Flash);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "flash", "-p", "fp32"}).bench.workload.attention,
            AttentionKind::Flash);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "flash", "-p", "bf16"}).bench.workload.attention,
            AttentionKind::Flash);
  EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "cudnn", "-p", "fp32"}), HasSubstr("not strict fp32"));
  // wgmma: bf16, and fp8 whose core is bf16; the device and the head size are checked by the layer.
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "wgmma"}).bench.workload.attention, AttentionKind::Wgmma);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "wgmma", "-p", "fp8"}).bench.workload.attention,
            AttentionKind::Wgmma);
  for (const char* p : {"fp32", "tf32"})
    EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "wgmma", "-p", p}),
                HasSubstr(std::string("--attention wgmma runs in bf16 (and fp8, whose core is bf16), not ") + p));
  EXPECT_THAT(parse_error({"bench", "resnet50", "--attention", "naive"}), HasSubstr("gpt2 only"));
  EXPECT_THAT(
      parse_error({"forward", "gpt2", "--tokens", LAPTIME_BINARY, "-o", "x.bin", "--attention", "cudnn", "-p", "fp32"}),
      HasSubstr("not strict fp32"));
}

// ResNet-50's stem: parsed onto the enum, fused refused outside bf16 and for GPT-2, host-side.
TEST(Cli, StemChoice) {
  EXPECT_EQ(parse({"bench", "resnet50"}).bench.workload.stem, StemKind::Auto);
  EXPECT_EQ(parse({"bench", "resnet50", "--stem", "fused"}).bench.workload.stem, StemKind::Fused);
  EXPECT_EQ(parse({"bench", "resnet50", "--stem", "cudnn", "-p", "fp32"}).bench.workload.stem, StemKind::Cudnn);
  EXPECT_THAT(parse_error({"bench", "resnet50", "--stem", "fast"}), HasSubstr("fast not in"));
  EXPECT_THAT(parse_error({"bench", "resnet50", "--stem", "fused", "-p", "tf32"}),
              HasSubstr("fused runs only in bf16"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--stem", "cudnn"}), HasSubstr("resnet50 only"));
  EXPECT_EQ(
      parse({"forward", "resnet50", "--input", LAPTIME_BINARY, "-o", "x.bin", "--stem", "fused"}).forward.workload.stem,
      StemKind::Fused);
}

// Runs the real binary; returns (exit status, stderr + stdout).
std::pair<int, std::string> run_laptime(const std::string& args) {
  // `timeout`: a regression that blocks (opening a FIFO) fails the test instead of hanging it.
  const std::string cmd = "timeout 60 " + std::string(LAPTIME_BINARY) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  const int status = pclose(pipe.release());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(CliBinary, ErrorsExitOneWithASentence) {
  auto [rc, out] = run_laptime("bench gpt2 --precision fp16");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("laptime: --precision: fp16 not in"));
  std::tie(rc, out) = run_laptime("forward gpt2 --weights /nonexistent.safetensors --tokens /nonexistent.bin -o x");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("laptime: "));
}

TEST(CliBinary, HelpExitsZero) {
  auto [rc, out] = run_laptime("bench --help");
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("--pitfall"));
}

// Without a GPU, bench must say so in one sentence and exit 1, not crash.
TEST(CliBinary, NoGpuIsAClearMessage) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU; the no-GPU message cannot be seen here";
  auto [rc, out] = run_laptime("bench gpt2 --batch 1 --seq 8 --iters 1 --warmup 0");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("laptime: no usable CUDA GPU"));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  // --trace starts CUPTI before anything else: its failure without a GPU says the same.
  const std::string trace = testing::TempDir() + "laptime_cli_no_gpu.sqlite";
  auto [trace_rc, trace_out] = run_laptime("bench gpt2 --batch 1 --seq 8 --iters 1 --warmup 0 --trace " + trace);
  EXPECT_EQ(trace_rc, 1);
  EXPECT_THAT(trace_out, HasSubstr("laptime: no usable CUDA GPU"));
  EXPECT_THAT(trace_out, Not(HasSubstr("CUPTI")));
  EXPECT_EQ(std::count(trace_out.begin(), trace_out.end(), '\n'), 1) << trace_out;
}

TEST(Context, NoGpuThrowsErrorNotCrash) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU";
  try {
    Context ctx;
    FAIL() << "a Context was created without a GPU";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no usable CUDA GPU"));
  }
}

// --- Numbers, switches and input files (core/cli_numbers.h, bench/limits.h) ------------------

// The whole message, as main() prints it after "laptime: ".
// A usage error names the command's own help.
std::string usage(const std::string& command, const std::string& sentence) {
  return sentence + " Run `laptime " + command + " --help` for usage.";
}

TEST(CliNumbers, BadNumbersAreOneSentenceNamingFlagAndText) {
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", "abc"}),
            usage("bench", "--batch must be a positive integer, got 'abc'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", "0"}),
            usage("bench", "--batch must be a positive integer, got '0'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "-b", "-3"}),
            usage("bench", "--batch must be a positive integer, got '-3'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", "8.5"}),
            usage("bench", "--batch must be a positive integer, got '8.5'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", " 8"}),
            usage("bench", "--batch must be a positive integer, got ' 8'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", "65537"}),
            usage("bench", "--batch must be at most 65536, got '65537'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--batch", "99999999999999999999"}),
            usage("bench", "--batch must be at most 65536, got '99999999999999999999'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--seq", "1e3"}),
            usage("bench", "--seq must be a positive integer, got '1e3'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--iters", "5000000"}),
            usage("bench", "--iters must be at most 1000000, got '5000000'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--warmup", "-1"}),
            usage("bench", "--warmup must be a non-negative integer, got '-1'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--device", "1024"}),
            usage("bench", "--device must be at most 1023, got '1024'."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--seed", "-1"}),
            usage("bench", "--seed must be a non-negative integer, got '-1'."));
  EXPECT_EQ(parse_error({"bench", "resnet50", "--image-size", "9000"}),
            usage("bench", "--image-size must be at most 8192, got '9000'."));
  EXPECT_EQ(parse_error({"forward", "gpt2", "--device", "x", "-o", "o"}),
            usage("forward", "--device must be a non-negative integer, got 'x'."));
  // What the user typed is cut short, so the message stays one line.
  const std::string long_typo(500, '9');
  EXPECT_LT(parse_error({"bench", "gpt2", "--batch", long_typo + "x"}).size(), 150u);
}

TEST(CliNumbers, BoundsAreAccepted) {
  const Command c = parse({"bench", "gpt2", "--batch", "65536", "--seq", "16", "--iters", "1000000", "--warmup", "0",
                           "--device", "1023", "--seed", "9223372036854775807"});
  EXPECT_EQ(c.bench.workload.batch, 65536);
  EXPECT_EQ(c.bench.iters, 1000000);
  EXPECT_EQ(c.bench.device, 1023);
  EXPECT_EQ(c.bench.workload.seed, 9223372036854775807ull);
}

TEST(CliNumbers, AnalyzeNumbers) {
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--gap-us", "nan"}),
            usage("analyze", "--gap-us must be a positive number, got 'nan'."));
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--gap-us", "inf"}),
            usage("analyze", "--gap-us must be a positive number, got 'inf'."));
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--gap-us", "0"}),
            usage("analyze", "--gap-us must be a positive number, got '0'."));
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--gap-us", "5us"}),
            usage("analyze", "--gap-us must be a positive number, got '5us'."));
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--gap-us", "2e9"}),
            usage("analyze", "--gap-us must be at most 1e+09, got '2e9'."));
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--top", "-1"}),
            usage("analyze", "--top must be a non-negative integer, got '-1'."));
  EXPECT_EQ(parse_error({"diff", "a", "b", "--top", "1000001"}),
            usage("diff", "--top must be at most 1000000, got '1000001'."));
  EXPECT_EQ(parse({"analyze", "t.sqlite", "--top", "0"}).analyze.report.top, 0);  // every row
  EXPECT_FALSE(parse({"analyze", "t.sqlite"}).analyze.report.top.has_value());    // 15 in the text, all in the JSON
  EXPECT_EQ(parse_error({"analyze", "t.sqlite", "--skip-warmup", "-1"}),
            usage("analyze", "--skip-warmup must be a non-negative integer, got '-1'."));
  const Parsed c = parse({"analyze", "t.sqlite", "--gap-us", "0.5", "--top", "3", "--skip-warmup", "0"});
  EXPECT_DOUBLE_EQ(c.analyze.report.gap_us, 0.5);
  EXPECT_EQ(c.analyze.report.top, 3);
  ASSERT_TRUE(c.analyze.report.skip_warmup.has_value());
  EXPECT_EQ(*c.analyze.report.skip_warmup, 0);
  EXPECT_FALSE(parse({"analyze", "t.sqlite"}).analyze.report.skip_warmup.has_value());
}

// The non-negative form (diff's --min-change-us, --fail-if-slower): zero allowed, NaN and
// infinities refused like every other number.
TEST(CliNumbers, NonNegativeReals) {
  auto error = [](const std::string& text) {
    try {
      cli::parse_non_negative_real("--min-change-us", text, 1e9);
    } catch (const CLI::ValidationError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(cli::parse_non_negative_real("--min-change-us", "0", 1e9), 0.0);
  EXPECT_FALSE(std::signbit(cli::parse_non_negative_real("--min-change-us", "-0", 1e9)));
  EXPECT_EQ(cli::parse_non_negative_real("--min-change-us", "2.5", 1e9), 2.5);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "-1", "", " 1", "1us", "1e400"})
    EXPECT_EQ(error(bad), std::string("--min-change-us must be a non-negative number, got '") + bad + "'.") << bad;
  EXPECT_EQ(error("2e9"), "--min-change-us must be at most 1e+09, got '2e9'.");
}

TEST(CliNumbers, GraphIsASwitch) {
  EXPECT_EQ(parse({"bench", "gpt2", "--graph"}).bench.graph, GraphMode::Graph);
  EXPECT_EQ(parse({"bench", "--graph", "gpt2"}).bench.graph, GraphMode::Graph);  // takes no value
  EXPECT_EQ(parse({"bench", "--graph", "gpt2"}).bench.workload.model, "gpt2");
  for (const char* off : {"--graph=0", "--graph=false", "--graph=no", "--graph=off", "--graph=OFF"})
    EXPECT_EQ(parse({"bench", "gpt2", off}).bench.graph, GraphMode::Eager) << off;
  for (const char* on : {"--graph=1", "--graph=true", "--graph=yes", "--graph=on"})
    EXPECT_EQ(parse({"bench", "gpt2", on}).bench.graph, GraphMode::Graph) << on;
  EXPECT_EQ(parse_error({"bench", "gpt2", "--graph=maybe"}),
            usage("bench", "--graph: takes no value, or one of 1/0, true/false, yes/no, on/off; got 'maybe'."));
  // Switched off, it no longer conflicts with the legacy stream.
  EXPECT_EQ(parse({"bench", "gpt2", "--graph=0", "--stream", "default"}).bench.stream, StreamKind::Legacy);
}

TEST(CliNumbers, TokenCountIsA64BitProductWithALimit) {
  EXPECT_EQ(parse_error({"bench", "gpt2", "-b", "65536", "-t", "65536"}),
            "--batch times --seq must be at most 1048576 tokens per forward, got B*T = 65536*65536 = 4294967296.");
  EXPECT_EQ(parse_error({"forward", "gpt2", "-b", "65536", "-t", "65536", "-o", "x"}),
            "--batch times --seq must be at most 1048576 tokens per forward, got B*T = 65536*65536 = 4294967296.");
  EXPECT_EQ(parse({"bench", "gpt2", "-b", "1024", "-t", "1024"}).bench.workload.batch, 1024);  // exactly the limit
  EXPECT_THAT(parse_error({"bench", "gpt2", "-b", "1025", "-t", "1024"}), HasSubstr("= 1049600."));
}

// A temporary folder of one test, removed after it.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("laptime-cli-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(CliNumbers, SpecialFilesAreRefusedAsInputs) {
  const TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(parse_error({"bench", "gpt2", "--weights", dir / "fifo"}),
            usage("bench", "--weights: " + (dir / "fifo") + " is a FIFO (named pipe), not a regular file."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--weights", "/dev/null"}),
            usage("bench", "--weights: /dev/null is a character device, not a regular file."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--weights", dir / ""}),
            usage("bench", "--weights: " + (dir / "") + " is a folder, not a regular file."));
  EXPECT_EQ(parse_error({"forward", "gpt2", "--tokens", dir / "fifo", "-o", "x"}),
            usage("forward", "--tokens: " + (dir / "fifo") + " is a FIFO (named pipe), not a regular file."));
  EXPECT_EQ(parse_error({"forward", "resnet50", "--input", "/dev/zero", "-o", "x"}),
            usage("forward", "--input: /dev/zero is a character device, not a regular file."));
  EXPECT_EQ(parse_error({"forward", "gpt2", "--tokens", dir / "missing", "-o", "x"}),
            usage("forward", "--tokens: cannot read " + (dir / "missing") + ": No such file or directory."));
}

// --- Ctrl-C during bench (bench/interrupt.h, bench/stats.h, core/stats.h) ----------------------------

TEST(Interrupt, FirstSigintSetsTheFlagSecondExits130) {
  EXPECT_EXIT(
      {
        const InterruptGuard guard;
        if (guard.requested()) std::exit(3);
        std::raise(SIGINT);  // the process goes on
        if (!guard.requested()) std::exit(4);
        std::raise(SIGINT);  // at once
        std::exit(5);
      },
      ::testing::ExitedWithCode(130), "interrupted: finishing with the iterations done so far");
}

TEST(Interrupt, GuardRestoresThePreviousHandler) {
  EXPECT_EXIT(
      {
        { const InterruptGuard guard; }
        std::raise(SIGINT);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
  // A fresh guard starts unset even after an earlier one saw a Ctrl-C.
  EXPECT_EXIT(
      {
        {
          const InterruptGuard first;
          std::raise(SIGINT);
        }
        const InterruptGuard second;
        std::exit(second.requested() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Interrupt, StatisticsOfTheLapsDone) {
  // 1, 2, 3, 4 ms: mean 2.5, median 2.5, p10 1.3 and p90 3.7 (linear between ranks), sample
  // standard deviation sqrt(5/3).
  const stats::Summary s = stats::summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_NEAR(s.p10, 1.3, 1e-12);
  EXPECT_NEAR(s.p90, 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(stats::summarize({7}).stddev, 0.0);
}

TEST(Interrupt, PartialReportSaysHowManyOfHowMany) {
  const std::string partial = steady_summary({4, 1, 3, 2}, 20, true, 9);
  EXPECT_EQ(partial,
            "  interrupted: 4 of 20 steady iterations done\n"
            "  steady state over 4 iterations (ms): mean 2.500  median 2.500  p10 1.300  p90 3.700  min 1.000  "
            "max 4.000  stddev 1.291");
  EXPECT_EQ(steady_summary({4, 1, 3, 2}, 4, false, 9).find("interrupted"), std::string::npos);
  EXPECT_EQ(steady_summary({}, 20, true, 3),
            "  interrupted after 3 iterations, all warm-up: no steady-state statistics");
  EXPECT_EQ(steady_summary({}, 20, true, 1),
            "  interrupted after 1 iteration, all warm-up: no steady-state statistics");
  EXPECT_EQ(steady_summary({}, 20, true, 0), "  interrupted before the first iteration: no statistics");
}

// --- Outputs, through the real binary: nothing the user gave as input is ever lost --------------------

std::string fixture_trace() { return std::string(LAPTIME_SOURCE_DIR) + "/tests/fixtures/synthetic_trace.sqlite"; }

TEST(CliOutputs, AnalyzeNeverWritesOntoItsTrace) {
  const TempDir dir;
  const std::string t = dir / "T.sqlite";
  std::filesystem::copy_file(fixture_trace(), t);
  const std::string before = read_bytes(t);
  std::filesystem::create_symlink(t, dir / "link.sqlite");
  for (const char* flag : {"--json", "--perfetto", "--svg"}) {
    for (const std::string& out : {t, dir / "link.sqlite"}) {
      auto [rc, msg] = run_laptime("analyze " + t + " " + flag + " " + out);
      EXPECT_EQ(rc, 1) << flag << " " << out;
      EXPECT_THAT(msg, HasSubstr(": it is the same file as the input " + t + "."));
      EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 1) << msg;
    }
  }
  EXPECT_EQ(read_bytes(t), before);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.sqlite"));
  // Read through the link, written onto the real file: refused the same.
  auto [rc, msg] = run_laptime("analyze " + (dir / "link.sqlite") + " --json " + t);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(read_bytes(t), before);
}

TEST(CliOutputs, DevicesAndFifosAreRefusedWithASentence) {
  const TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  auto [rc, msg] = run_laptime("analyze " + fixture_trace() + " --json /dev/null");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("laptime: refusing to write the JSON report to /dev/null: it is a character device, not a "
                             "regular file."));
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --svg /dev/full");
  EXPECT_EQ(rc, 1) << "a full device is an error, never exit 0";
  EXPECT_THAT(msg, HasSubstr("refusing to write the SVG timeline to /dev/full"));
  // `timeout`: with a FIFO, the old code blocked forever.
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --perfetto " + (dir / "fifo") + " < /dev/null");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("it is a FIFO (named pipe), not a regular file."));
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "fifo"));
  std::tie(rc, msg) = run_laptime("analyze " + (dir / "fifo"));
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("laptime: " + (dir / "fifo") +
                             " is a FIFO (named pipe), not a regular file, so it "
                             "cannot be a trace."));
}

TEST(CliOutputs, JsonOnStandardOutput) {
  const TempDir dir;
  const std::string cmd = std::string(LAPTIME_BINARY) + " analyze " + fixture_trace() + " --json - > " +
                          (dir / "out.json") + " 2> " + (dir / "err.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto report = nlohmann::json::parse(read_bytes(dir / "out.json"));  // JSON alone on stdout
  EXPECT_TRUE(report.contains("verdict"));
  EXPECT_THAT(read_bytes(dir / "err.txt"), HasSubstr("Verdict:"));  // the text report on stderr
  // Standard output on a full device: an error, not exit 0.
  const std::string full =
      std::string(LAPTIME_BINARY) + " analyze " + fixture_trace() + " --json - > /dev/full 2> " + (dir / "err2.txt");
  const int status = std::system(full.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_THAT(read_bytes(dir / "err2.txt"),
              HasSubstr("laptime: cannot write the JSON report to -: No space left on device."));
  // Only a JSON report may go to standard output.
  auto [rc, msg] = run_laptime("analyze " + fixture_trace() + " --svg -");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("the SVG timeline cannot go to standard output ('-'): give a file name."));
}

TEST(CliOutputs, AnalyzeWritesComplete) {
  const TempDir dir;
  std::ofstream(dir / "r.json") << "old";
  auto [rc, msg] = run_laptime("analyze " + fixture_trace() + " --json " + (dir / "r.json") + " --svg " +
                               (dir / "t.svg") + " --perfetto " + (dir / "p.json"));
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(dir / "r.json")).contains("verdict"));
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(dir / "p.json")).contains("traceEvents"));
  EXPECT_THAT(read_bytes(dir / "t.svg"), HasSubstr("</svg>"));
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "")) entries += e.is_regular_file();
  EXPECT_EQ(entries, 3u) << "no temporary left";
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --json " + (dir / "a") + " --svg " + (dir / "a"));
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("the JSON report and the SVG timeline would both be written to " + (dir / "a")));
}

// bench and forward check their outputs before anything else: on this machine without a GPU, the
// output's sentence comes instead of the no-GPU one, which shows the order.
TEST(CliOutputs, BenchAndForwardCheckOutputsFirst) {
  const TempDir dir;
  const std::string w = dir / "w.safetensors", tokens = dir / "tokens.bin";
  std::ofstream(w) << "weights";
  std::ofstream(tokens) << "tokens!!";
  auto [rc, msg] = run_laptime("bench gpt2 --json " + (dir / "nodir/r.json"));
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("laptime: cannot write the JSON report to " + (dir / "nodir/r.json") + ": folder " +
                             (dir / "nodir") + " does not exist."));
  std::tie(rc, msg) = run_laptime("bench gpt2 --weights " + w + " --trace " + w);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("refusing to write the trace to " + w + ": it is the same file as the input " + w + "."));
  std::tie(rc, msg) = run_laptime("bench gpt2 --weights " + w + " --json " + w);
  EXPECT_THAT(msg, HasSubstr("same file as the input"));
  std::tie(rc, msg) = run_laptime("bench gpt2 --json " + (dir / "x") + " --trace " + (dir / "x"));
  EXPECT_THAT(msg, HasSubstr("would both be written"));
  std::tie(rc, msg) = run_laptime("bench gpt2 --trace /dev/null");
  EXPECT_THAT(msg, HasSubstr("refusing to write the trace to /dev/null: it is a character device"));
  std::tie(rc, msg) = run_laptime("bench gpt2 --weights " + w + " --output " + w);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("refusing to write the logits to " + w + ": it is the same file as the input " + w + "."));
  std::tie(rc, msg) = run_laptime("bench gpt2 --json " + (dir / "y") + " -o " + (dir / "y"));
  EXPECT_THAT(msg, HasSubstr("the JSON report and the logits would both be written"));
  std::tie(rc, msg) = run_laptime("bench gpt2 -o -");
  EXPECT_THAT(msg, HasSubstr("the logits cannot go to standard output"));
  std::tie(rc, msg) = run_laptime("forward gpt2 --weights " + w + " --tokens " + tokens + " -o " + tokens);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(msg, HasSubstr("refusing to write the logits to " + tokens + ": it is the same file as the input " +
                             tokens + "."));
  std::tie(rc, msg) = run_laptime("forward gpt2 --weights " + w + " --tokens " + tokens + " -o " + w);
  EXPECT_THAT(msg, HasSubstr("same file as the input " + w));
  const std::string calibration = dir / "calibration.bin";
  std::ofstream(calibration) << "tokens!!";
  std::tie(rc, msg) = run_laptime("forward gpt2 -p fp8 --weights " + w + " --tokens " + tokens + " --calibrate " +
                                  calibration + " -o " + calibration);
  EXPECT_THAT(msg, HasSubstr("refusing to write the logits to " + calibration + ": it is the same file as the input " +
                             calibration + "."));
  std::tie(rc, msg) = run_laptime("forward gpt2 --weights " + w + " --tokens " + tokens + " -o -");
  EXPECT_THAT(msg, HasSubstr("the logits cannot go to standard output"));
  EXPECT_EQ(read_bytes(w), "weights");
  EXPECT_EQ(read_bytes(tokens), "tokens!!");
}

// `--json ''` used to mean "not asked for": nothing written, exit 0. Every file flag refuses it.
TEST(CliOutputs, EmptyFileNamesAreRefused) {
  const std::string t = fixture_trace();
  for (const char* flag : {"--perfetto", "--svg", "--roofline-svg"})
    EXPECT_EQ(parse_error({"analyze", t, flag, ""}),
              usage("analyze", std::string(flag) + ": the file name is empty; give a file name."))
        << flag;
  EXPECT_EQ(parse_error({"analyze", t, "--json", ""}),
            usage("analyze", "--json: the file name is empty; give a file name (or - for standard output)."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--json", ""}),
            usage("bench", "--json: the file name is empty; give a file name (or - for standard output)."));
  EXPECT_EQ(parse_error({"bench", "gpt2", "--trace", ""}),
            usage("bench", "--trace: the file name is empty; give a file name."));
  EXPECT_EQ(parse_error({"forward", "gpt2", "-o", ""}),
            usage("forward", "--output: the file name is empty; give a file name."));
  EXPECT_EQ(parse_error({"peak", "--cache", ""}), usage("peak", "--cache: the file name is empty; give a file name."));
  for (const char* flag : {"--layers", "--peak"})
    EXPECT_EQ(parse_error({"analyze", t, flag, ""}),
              usage("analyze", std::string(flag) + ": the file name is empty; give a file."));
  EXPECT_EQ(parse_error({"analyze", ""}), usage("analyze", "file: a file name is empty; give a file."));
  EXPECT_EQ(parse_error({"forward", "gpt2", "--tokens", "", "-o", "x"}),
            usage("forward", "--tokens: the file name is empty; give a file."));
  auto [rc, msg] = run_laptime("analyze " + t + " --json ''");
  EXPECT_EQ(rc, 1) << msg;
}

// `analyze T --json r.json >&-`: before, the temporary got descriptor 1 and the text report
// went into it. Now descriptors 0-2 are held on /dev/null (read-only), the JSON file holds the
// JSON alone, and the report's failed write is the error.
TEST(CliOutputs, AClosedStandardOutputNeverReachesAnOutputFile) {
  const TempDir dir;
  const std::string cmd = std::string(LAPTIME_BINARY) + " analyze " + fixture_trace() + " --json " + (dir / "r.json") +
                          " >&- 2> " + (dir / "err.txt");
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_EQ(read_bytes(dir / "err.txt"), "laptime: cannot write the report to standard output: Bad file descriptor.\n");
  const std::string json = read_bytes(dir / "r.json");
  EXPECT_EQ(json.find("laptime analyze"), std::string::npos) << "no text report inside the JSON";
  EXPECT_TRUE(nlohmann::json::parse(json).contains("verdict"));
  const std::string to_stdout =
      std::string(LAPTIME_BINARY) + " analyze " + fixture_trace() + " --json - >&- 2> " + (dir / "err2.txt");
  status = std::system(to_stdout.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_THAT(read_bytes(dir / "err2.txt"),
              HasSubstr("laptime: cannot write the JSON report to -: Bad file descriptor."));
}

// A link planted at the output's name in a sticky world-writable folder (/tmp): before, laptime
// resolved it and renamed its JSON onto the victim's file. Now the link itself is replaced.
TEST(CliOutputs, AnOutputThatIsALinkIsReplacedNotFollowed) {
  const TempDir dir;
  std::filesystem::create_directory(dir / "shared");
  std::filesystem::permissions(dir / "shared", std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  std::ofstream(dir / "victim.txt") << "the victim's file";
  std::filesystem::create_symlink(dir / "victim.txt", dir / "shared/report.json");
  auto [rc, msg] = run_laptime("analyze " + fixture_trace() + " --json " + (dir / "shared/report.json"));
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_EQ(read_bytes(dir / "victim.txt"), "the victim's file");
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "shared/report.json"));
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(dir / "shared/report.json")).contains("verdict"));
  // A name at the file-name limit is written (before: "File name too long" for the temporary).
  const long limit = ::pathconf((dir / "").c_str(), _PC_NAME_MAX);
  const std::string longest = dir / (std::string(static_cast<size_t>(limit) - 5, 'n') + ".json");
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --json " + longest);
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_TRUE(nlohmann::json::parse(read_bytes(longest)).contains("verdict"));
}

// A layer costs file beside the trace, --layers and --peak are inputs too: a FIFO blocked the
// run forever (after the whole analysis), a folder ended in "unexpected error:
// basic_filebuf::underflow". Refused before the trace is read.
TEST(CliInputs, SidecarsThatAreNotRegularFilesAreRefusedFirst) {
  const TempDir dir;
  const std::string t = dir / "R.sqlite";
  std::filesystem::copy_file(fixture_trace(), t);
  ASSERT_EQ(::mkfifo((dir / "R.layers.json").c_str(), 0600), 0);
  auto [rc, msg] = run_laptime("analyze " + t);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg, "laptime: " + (dir / "R.layers.json") +
                     " is a FIFO (named pipe), not a regular file, so it cannot be a layer costs file.\n");
  std::filesystem::create_directory(dir / "folder");
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --layers " + (dir / "folder"));
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg,
            "laptime: " + (dir / "folder") + " is a folder, not a regular file, so it cannot be a layer costs file.\n");
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --layers " + (dir / "R.layers.json"));
  EXPECT_THAT(msg, HasSubstr("is a FIFO (named pipe), not a regular file, so it cannot be a layer costs file."));
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --peak /dev/zero");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg, "laptime: /dev/zero is a character device, not a regular file, so it cannot be a peak file.\n");
  std::tie(rc, msg) = run_laptime("analyze " + fixture_trace() + " --peak " + (dir / "missing.json"));
  EXPECT_EQ(msg, "laptime: cannot read the peak file " + (dir / "missing.json") + ": No such file or directory.\n");
}

// `laptime diff` on special files: a FIFO as either run, as the layer costs file beside a run, or
// as --json blocked forever (run_laptime's `timeout 60` ends a hang as a failure).
TEST(CliDiff, SpecialFilesAreRefusedWithoutBlocking) {
  const TempDir dir;
  const std::string fx = std::string(LAPTIME_SOURCE_DIR) + "/tests/fixtures/";
  const std::string a = fx + "diff_base.sqlite", b = fx + "diff_attn_slower.sqlite";
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const std::string fifo = dir / "fifo";
  const std::string fifo_says =
      " is a FIFO (named pipe), not a regular file, so it cannot be a trace or a bench report.\n";
  auto [rc, msg] = run_laptime("diff " + fifo + " " + b);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg, "laptime: " + fifo + fifo_says);
  std::tie(rc, msg) = run_laptime("diff " + a + " " + fifo);
  EXPECT_EQ(msg, "laptime: " + fifo + fifo_says);
  std::tie(rc, msg) = run_laptime("diff " + a + " " + b + " --json " + fifo);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg, "laptime: refusing to write the JSON diff to " + fifo +
                     ": it is a FIFO (named pipe), not a regular file.\n");
  std::tie(rc, msg) = run_laptime("diff " + (dir / "") + " " + b);
  EXPECT_EQ(
      msg, "laptime: " + (dir / "") + " is a folder, not a regular file, so it cannot be a trace or a bench report.\n");
  std::tie(rc, msg) = run_laptime("diff /dev/zero " + b);
  EXPECT_EQ(msg,
            "laptime: /dev/zero is a character device, not a regular file, so it cannot be a trace or a bench "
            "report.\n");
  std::filesystem::copy_file(a, dir / "R.sqlite");
  ASSERT_EQ(::mkfifo((dir / "R.layers.json").c_str(), 0600), 0);
  std::tie(rc, msg) = run_laptime("diff " + (dir / "R.sqlite") + " " + b);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(msg, "laptime: " + (dir / "R.layers.json") +
                     " is a FIFO (named pipe), not a regular file, so it cannot be a layer costs file.\n");
  std::tie(rc, msg) = run_laptime("diff " + a + " " + b + " --peak " + fifo);
  EXPECT_EQ(msg, "laptime: " + fifo + " is a FIFO (named pipe), not a regular file, so it cannot be a peak file.\n");
}

// `--json -` made a file named `-`; now it is standard output, as analyze's, with the text report
// on standard error. A full standard output is an error, and a link at --json is replaced.
TEST(CliDiff, JsonOnStandardOutputAndLinks) {
  const TempDir dir;
  const std::string fx = std::string(LAPTIME_SOURCE_DIR) + "/tests/fixtures/";
  const std::string pair = fx + "diff_base.sqlite " + fx + "diff_attn_slower.sqlite";
  const std::string cmd =
      "cd " + (dir / "") + " && " + LAPTIME_BINARY + " diff " + pair + " --json - > out.json 2> err.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(nlohmann::json::parse(read_bytes(dir / "out.json"))["schema"], "laptime.diff/1");
  EXPECT_THAT(read_bytes(dir / "err.txt"), HasSubstr("Verdict:"));
  EXPECT_FALSE(std::filesystem::exists(dir / "-"));
  const std::string full = std::string(LAPTIME_BINARY) + " diff " + pair + " --json - > /dev/full 2> " + (dir / "e2");
  const int status = std::system(full.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_THAT(read_bytes(dir / "e2"),
              ::testing::EndsWith("\nlaptime: cannot write the JSON diff to -: No space left on "
                                  "device.\n"));  // after the report, on stderr
  const std::string report_full = std::string(LAPTIME_BINARY) + " diff " + pair + " > /dev/full 2> " + (dir / "e3");
  EXPECT_NE(std::system(report_full.c_str()), 0);
  EXPECT_EQ(read_bytes(dir / "e3"), "laptime: cannot write the report to standard output: No space left on device.\n");
  std::ofstream(dir / "victim.txt") << "the victim's file";
  std::filesystem::create_symlink(dir / "victim.txt", dir / "d.json");
  auto [rc, msg] = run_laptime("diff " + pair + " --json " + (dir / "d.json") + " --svg " + (dir / "d.svg"));
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_EQ(read_bytes(dir / "victim.txt"), "the victim's file");
  EXPECT_EQ(nlohmann::json::parse(read_bytes(dir / "d.json"))["schema"], "laptime.diff/1");
  EXPECT_THAT(read_bytes(dir / "d.svg"), HasSubstr("</svg>"));
  EXPECT_THAT(msg, HasSubstr("wrote JSON diff: " + (dir / "d.json") + "\nwrote SVG diff: " + (dir / "d.svg") + "\n"));
}

// A trace in SQLite's WAL mode got -wal and -shm files created beside it by every analysis (and
// could not be read in a folder the user cannot write). Opened read-only and immutable: nothing
// appears beside it. The path goes into an URI: characters URIs reserve are encoded.
TEST(CliInputs, AWalModeTraceIsReadWithoutFilesBesideIt) {
  const TempDir dir;
  std::filesystem::create_directory(dir / "odd ?#%:name");
  const std::string t = dir / "odd ?#%:name/w&l.sqlite";
  std::filesystem::copy_file(fixture_trace(), t);
  {  // WAL mode is the file format versions at header bytes 18 and 19 set to 2 (sqlite.org/fileformat.html)
    std::fstream f(t, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(18);
    f.write("\x02\x02", 2);
  }
  ASSERT_FALSE(std::filesystem::exists(t + "-wal"));
  auto [rc, msg] = run_laptime("analyze '" + t + "'");
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_THAT(msg, HasSubstr("Verdict:"));
  EXPECT_FALSE(std::filesystem::exists(t + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(t + "-shm"));
  std::tie(rc, msg) = run_laptime("diff '" + t + "' '" + t + "'");
  EXPECT_EQ(rc, 0) << msg;
  EXPECT_FALSE(std::filesystem::exists(t + "-shm"));
}

}  // namespace
}  // namespace laptime
