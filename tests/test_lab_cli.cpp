// `laptime lab` and `--kernel` on the command line: the parser in-process (every refusal one
// sentence, before any GPU work) and the real binary (--list and --list --json without a GPU; on a
// machine without one, a run says so in one sentence). Host only: these need no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/gpu_cli.h"
#include "bench/lab/measure.h"
#include "bench/lab/result.h"
#include "core/check.h"
#include "core/context.h"
#include "tests/support/run_binary.h"

namespace laptime {
namespace {

using ::testing::HasSubstr;
using testing_support::run_shell;

std::string sentence(const std::vector<std::string>& args) {
  try {
    parse_command_line(args);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

testing_support::RunResult laptime(const std::string& args) {
  return run_shell(std::string(LAPTIME_BINARY) + " " + args + " 2>&1");
}

TEST(LabCli, ParsesAndResolves) {
  const Command c = parse_command_line({"lab", "layernorm", "--versions", "v3,v1", "-p", "fp32", "--shape",
                                        "rows=37,C=771", "--seed", "5", "--target", "0.02", "--once"});
  ASSERT_EQ(c.kind, Command::Kind::Lab);
  EXPECT_EQ(c.lab.kernel, "layernorm");
  EXPECT_EQ(c.lab.precision, "fp32");
  EXPECT_EQ(c.lab.version_indices, (std::vector<int>{0, 2}));
  ASSERT_EQ(c.lab.timed_shapes.size(), 1u);
  EXPECT_EQ(c.lab.timed_shapes[0].dims, (std::vector<int64_t>{37, 771}));
  EXPECT_EQ(c.lab.seed, 5u);
  EXPECT_EQ(c.lab.target, 0.02);
  EXPECT_TRUE(c.lab.once);
  const Command d = parse_command_line({"lab", "quantize"});
  EXPECT_EQ(d.lab.precision, "fp8");         // the kernel's first precision
  EXPECT_EQ(d.lab.timed_shapes.size(), 2u);  // the models' shapes
  EXPECT_EQ(d.lab.version_indices.size(), 3u);
  const Command b = parse_command_line({"bench", "gpt2", "--kernel", "layernorm=v1", "--kernel", "embedding=v2"});
  EXPECT_EQ(b.bench.workload.kernels, (lab::KernelChoice{{"layernorm", 0}, {"embedding", 1}}));
  const std::string images = std::string(LAPTIME_SOURCE_DIR) + "/README.md";  // any regular file parses
  const Command f = parse_command_line(
      {"forward", "resnet50", "--input", images, "-o", "x", "--kernel", "maxpool=v2", "--stem", "cudnn"});
  EXPECT_EQ(f.forward.workload.kernels, (lab::KernelChoice{{"maxpool", 1}}));
}

TEST(LabCli, BadWordsAreOneSentence) {
  EXPECT_EQ(sentence({"lab"}), "laptime lab needs a KERNEL to run, or --list for the kernels and their versions.");
  EXPECT_THAT(sentence({"lab", "softmax"}), HasSubstr("unknown kernel 'softmax': choose one of layernorm"));
  EXPECT_EQ(sentence({"lab", "amax", "-p", "bf16"}), "amax runs in fp8, not bf16.");
  EXPECT_EQ(sentence({"lab", "maxpool", "--versions", "v4"}),
            "--versions: maxpool has no version 'v4': it has v1, v2, v3 (or all).");
  EXPECT_EQ(sentence({"lab", "maxpool", "--shape", "N=0"}), "--shape: N must be an integer from 1 to 4096, not '0'.");
  EXPECT_EQ(sentence({"lab", "--list", "maxpool"}),
            "--list lists every kernel: give it no KERNEL (`laptime lab maxpool` runs one).");
  EXPECT_EQ(sentence({"lab", "--list", "--html", "l.html"}),
            "--list takes --json alone; --versions, --shape, -p, --once, --seed, --peak and --html apply to `laptime "
            "lab KERNEL`.");
  EXPECT_THAT(sentence({"lab", "layernorm", "-p", "tf32"}), HasSubstr("tf32 not in"));
  EXPECT_THAT(sentence({"lab", "layernorm", "--target", "0"}), HasSubstr("--target"));
  EXPECT_EQ(sentence({"bench", "gpt2", "--kernel", "layernorm=v1", "--kernel", "layernorm=v3"}),
            "--kernel names layernorm twice.");
  EXPECT_EQ(sentence({"bench", "gpt2", "--kernel", "attention=v2", "--attention", "flash"}),
            "--kernel attention and --attention both choose the attention core; give one.");
  EXPECT_THAT(sentence({"bench", "resnet50", "--kernel", "conv_epilogue=v1"}),
              HasSubstr("--kernel conv_epilogue: resnet50 cannot swap it: "));
  EXPECT_THAT(sentence({"bench", "gpt2", "--kernel", "layernorm=v2", "-p", "tf32"}),
              HasSubstr("--kernel layernorm swaps into gpt2 in fp32, bf16, not tf32"));
}

TEST(LabCli, ListRunsWithoutAGpu) {
  const auto text = laptime("lab --list");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("layernorm (bf16, fp32)"));
  EXPECT_THAT(text.out, HasSubstr("* production in"));
  const auto json = run_shell(std::string(LAPTIME_BINARY) + " lab --list --json - 2>/dev/null");
  ASSERT_EQ(json.status, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], "laptime.lab.list/1");
  ASSERT_GE(j["kernels"].size(), 7u);
  for (const nlohmann::json& k : j["kernels"]) {
    EXPECT_GE(k["versions"].size(), 3u) << k["name"];
    EXPECT_FALSE(k["production"].empty()) << k["name"];
  }
}

TEST(LabCli, ErrorsThroughTheBinary) {
  const auto r = laptime("lab nosuchkernel");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("laptime: unknown kernel 'nosuchkernel'"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const auto k = laptime("kernels --command lab layernorm");
  EXPECT_EQ(k.status, 0) << k.out;
  EXPECT_THAT(k.out, HasSubstr("--nvtx-include 'laptime@lab/layernorm/'"));
  EXPECT_THAT(k.out, HasSubstr("laptime lab layernorm --once --json lab_layernorm.json"));
}

TEST(LabCli, NoGpuIsOneSentence) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU; the no-GPU message cannot be seen here";
  const auto r = laptime("lab layernorm");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("laptime: no usable CUDA GPU"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

// The median and its bootstrap interval: the interval holds the median, and narrows as the
// calls grow in number (the same spread of times, 25 and 2500 of them).
TEST(LabTiming, MedianIntervalNarrowsWithMoreCalls) {
  std::vector<double> few, many;
  for (int i = 0; i < 2500; ++i) (i < 25 ? few : many).push_back(10.0 + (i * 7919 % 101) / 100.0);
  many.insert(many.end(), few.begin(), few.end());
  const lab::Timing a = lab::median_interval(few, 1), b = lab::median_interval(many, 1);
  EXPECT_EQ(a.runs, 25);
  EXPECT_LE(a.lo_ms, a.median_ms);
  EXPECT_GE(a.hi_ms, a.median_ms);
  EXPECT_LT(b.hi_ms - b.lo_ms, a.hi_ms - a.lo_ms);
  EXPECT_NEAR(b.median_ms, 10.5, 0.02);
  const lab::Timing same = lab::median_interval({3, 3, 3}, 1);
  EXPECT_EQ(same.lo_ms, 3);
  EXPECT_EQ(same.hi_ms, 3);
}

// Compute, then present: the JSON from a result made by hand, a failed version without timings.
TEST(LabReport, JsonFromAResultMadeByHand) {
  lab::LabResult r;
  r.kernel = "layernorm";
  r.precision = "bf16";
  r.gpu = "a GPU";
  r.seed = 9;
  r.ceilings_note = "no peak cache";
  r.shapes.push_back({{"gpt2", {8192, 768}}, "rows=8192 C=768", {100, 50, 0}});
  lab::VersionResult ok, bad;
  ok.id = "v3";
  ok.production = true;
  ok.checks.push_back({"rows=1 C=1", "random", true, false, 1e-3, 8e-3, 1, 1, ""});
  ok.timings.push_back({0, 100, true, 6.0, 5.9, 6.1, 25.0, 0, -1, -1, 2.0, 1.0});
  bad.id = "v1";
  bad.checks.push_back({"rows=1 C=1", "zeros", false, false, 0.5, 8e-3, 1, 1, "worst [0, 0]: got 1, want 2"});
  r.versions = {bad, ok};
  const nlohmann::json j = lab::lab_to_json(r);
  EXPECT_EQ(j["schema"], "laptime.lab/1");
  EXPECT_TRUE(j["roofs"].is_null());
  EXPECT_EQ(j["versions"][0]["status"], "FAILED");
  EXPECT_TRUE(j["versions"][0]["timings"].empty());
  EXPECT_EQ(j["versions"][1]["status"], "passed");
  EXPECT_EQ(j["versions"][1]["timings"][0]["median_us"], 6.0);
  EXPECT_TRUE(j["versions"][1]["timings"][0]["dram_pct"].is_null());
  EXPECT_EQ(j["shapes"][0]["bytes"]["read"], 100.0);
}

}  // namespace
}  // namespace laptime
