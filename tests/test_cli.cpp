// The laptime command line, host only: parsing, defaults, and the one-sentence errors for
// bad input. The last tests run the real binary, so exit codes and stderr are checked too
// (on a machine without a GPU, the no-GPU message itself is under test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>

#include "bench/cli.h"
#include "core/check.h"

namespace laptime {
namespace {

using ::testing::HasSubstr;

Command parse(std::vector<std::string> args) { return parse_command_line(args); }

std::string parse_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const Error& e) {
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
}

TEST(Cli, HelpIsText) {
  const Command c = parse({"bench", "--help"});
  EXPECT_EQ(c.kind, Command::Kind::Help);
  EXPECT_THAT(c.help_text, HasSubstr("--precision"));
  EXPECT_THAT(c.help_text, HasSubstr("--graph"));
  EXPECT_THAT(parse({"--help"}).help_text, HasSubstr("bench"));
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
  EXPECT_THAT(parse_error({"bench", "gpt2", "--weights", "/nonexistent/w.safetensors"}), HasSubstr("/nonexistent/w.safetensors"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--graph", "--stream", "default"}), HasSubstr("cannot be captured"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--graph", "--pitfall", "sync"}), HasSubstr("--pitfall cannot be combined"));
  EXPECT_THAT(parse_error({"forward", "gpt2", "--output", "x.bin"}), HasSubstr("needs --tokens"));
  EXPECT_THAT(parse_error({"frobnicate"}), HasSubstr("frobnicate"));
  EXPECT_THAT(parse_error({}), HasSubstr("subcommand"));
  for (const auto& args : {std::vector<std::string>{"bench", "gpt3"}, {"bench", "gpt2", "--batch", "0"}}) {
    const std::string msg = parse_error(args);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
    EXPECT_THAT(msg, HasSubstr("laptime --help"));
  }
}

// GPT-2's attention core: parsed onto the enum, refused where it cannot run, host-side.
TEST(Cli, AttentionChoice) {
  EXPECT_EQ(parse({"bench", "gpt2"}).bench.workload.attention, AttentionKind::Auto);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "cudnn"}).bench.workload.attention, AttentionKind::Cudnn);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "naive", "-p", "fp32"}).bench.workload.attention, AttentionKind::Naive);
  EXPECT_EQ(parse({"bench", "gpt2", "--attention", "cudnn", "-p", "tf32"}).bench.workload.attention, AttentionKind::Cudnn);
  EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "fast"}), HasSubstr("fast not in"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "flash", "-p", "tf32"}), HasSubstr("flash runs only in bf16"));
  EXPECT_THAT(parse_error({"bench", "gpt2", "--attention", "cudnn", "-p", "fp32"}), HasSubstr("not strict fp32"));
  EXPECT_THAT(parse_error({"bench", "resnet50", "--attention", "naive"}), HasSubstr("gpt2 only"));
  EXPECT_THAT(parse_error({"forward", "gpt2", "--tokens", LAPTIME_BINARY, "-o", "x.bin", "--attention", "flash", "-p",
                           "fp32"}),
              HasSubstr("flash runs only in bf16"));
}

// Runs the real binary; returns (exit status, stderr + stdout).
std::pair<int, std::string> run_laptime(const std::string& args) {
  const std::string cmd = std::string(LAPTIME_BINARY) + " " + args + " 2>&1";
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

}  // namespace
}  // namespace laptime
