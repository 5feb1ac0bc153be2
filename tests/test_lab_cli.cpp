// `laptime lab` and `--kernel` on the command line: the parser in-process (every refusal one
// sentence, before any GPU work) and the real binary (--list and --list --json without a GPU; on a
// machine without one, a run says so in one sentence). Host only: these need no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/gpu_cli.h"
#include "bench/lab/measure.h"
#include "bench/lab/result.h"
#include "bench/lab/run.h"
#include "core/check.h"
#include "core/context.h"
#include "kernels/lab/try_template.h"
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
  EXPECT_EQ(sentence({"lab"}),
            "laptime lab needs a KERNEL to run, or --list for the kernels and their versions, or --all for every one.");
  EXPECT_THAT(sentence({"lab", "softmax"}), HasSubstr("unknown kernel 'softmax': choose one of layernorm"));
  EXPECT_EQ(sentence({"lab", "amax", "-p", "bf16"}), "amax runs in fp8, not bf16.");
  EXPECT_EQ(sentence({"lab", "maxpool", "--versions", "v4"}),
            "--versions: maxpool has no version 'v4': it has v1, v2, v3 (or all, or none).");
  EXPECT_EQ(sentence({"lab", "maxpool", "--shape", "N=0"}), "--shape: N must be an integer from 1 to 4096, not '0'.");
  EXPECT_EQ(sentence({"lab", "--list", "maxpool"}),
            "--list lists every kernel: give it no KERNEL (`laptime lab maxpool` runs one).");
  EXPECT_EQ(sentence({"lab", "--list", "--html", "l.html"}),
            "--list takes --json alone; --versions, --shape, -p, --once, --seed, --peak, --html, --try, --template and "
            "--all apply to `laptime lab KERNEL`.");
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

// --- a learner's own file: --template, --try, --kernel NAME=FILE.cu ----------------------------

std::string example(const std::string& name) {
  return std::string(LAPTIME_SOURCE_DIR) + "/kernels/lab/examples/" + name;
}

TEST(LabCli, TryTemplateTimeoutAndAllParse) {
  const Command t = parse_command_line(
      {"lab", "layernorm", "--try", "a.cu", "--try", "b/c.cu", "--timeout", "2.5", "--versions", "none"});
  EXPECT_EQ(t.lab.tries, (std::vector<std::string>{"a.cu", "b/c.cu"}));
  EXPECT_EQ(t.lab.timeout, 2.5);
  EXPECT_TRUE(t.lab.version_indices.empty());
  EXPECT_FALSE(t.lab.template_file);
  const Command out = parse_command_line({"lab", "quantize", "--template"});
  ASSERT_TRUE(out.lab.template_file);
  EXPECT_EQ(*out.lab.template_file, "");  // standard output
  const Command file = parse_command_line({"lab", "quantize", "--template", "q.cu"});
  ASSERT_TRUE(file.lab.template_file);
  EXPECT_EQ(*file.lab.template_file, "q.cu");
  EXPECT_TRUE(parse_command_line({"lab", "--all"}).lab.all);
  const std::string v2 = example("layernorm_v2.cu");
  const Command b = parse_command_line({"bench", "gpt2", "--kernel", "layernorm=" + v2, "--kernel", "embedding=v2"});
  EXPECT_EQ(b.bench.workload.kernel_files, (lab::KernelFiles{{"layernorm", v2}}));
  EXPECT_EQ(b.bench.workload.kernels, (lab::KernelChoice{{"embedding", 1}}));
}

TEST(LabCli, TryRefusalsAreOneSentence) {
  EXPECT_EQ(sentence({"lab", "layernorm", "--versions", "none"}),
            "--versions none runs no version of the ladder: give --try FILE.cu for a file of yours.");
  EXPECT_EQ(sentence({"lab", "layernorm", "--try", "a/x.cu", "--try", "b/x.cu"}),
            "--try names two files called x.cu: each rung is named by its file; rename one.");
  EXPECT_THAT(sentence({"lab", "layernorm", "--template", "t.cu", "-p", "fp32"}),
              HasSubstr("--template writes the file and runs nothing"));
  EXPECT_EQ(sentence({"lab", "--all", "layernorm"}),
            "--all runs every kernel: give it no KERNEL (`laptime lab layernorm` runs one).");
  EXPECT_THAT(sentence({"lab", "--all", "--try", "x.cu"}), HasSubstr("--all runs every kernel's first and production"));
  EXPECT_THAT(sentence({"lab", "layernorm", "--timeout", "0"}), HasSubstr("--timeout"));
  EXPECT_EQ(sentence({"bench", "gpt2", "--kernel", "layernorm=nope.cu"}),
            "--kernel layernorm=nope.cu: nope.cu cannot be read: No such file or directory.");
  EXPECT_THAT(sentence({"bench", "resnet50", "--kernel", "layernorm=x.cu"}),
              HasSubstr("--kernel layernorm: resnet50 runs no layernorm kernel"));
  EXPECT_EQ(sentence({"bench", "gpt2", "--kernel", "layernorm=v1", "--kernel", "layernorm=x.cu"}),
            "--kernel names layernorm twice.");
  EXPECT_THAT(sentence({"bench", "gpt2", "-p", "fp8", "--kernel", "layernorm=" + example("layernorm_v2.cu")}),
              HasSubstr("--kernel layernorm swaps into gpt2 in fp32, bf16, not fp8"));
  EXPECT_EQ(sentence({"bench", "gpt2", "--kernel", "attention=" + example("layernorm_v2.cu"), "--attention", "flash"}),
            "--kernel attention and --attention both choose the attention core; give one.");
}

// A fresh folder under the test's temporary folder, as a learner's working folder.
std::string fresh_folder(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "laptime_lab_cli_" + name;
  run_shell("rm -rf '" + dir + "'");
  run_shell("mkdir -p '" + dir + "'");
  return dir;
}

TEST(LabCli, TemplateWithoutAGpu) {
  const auto out = run_shell(std::string(LAPTIME_BINARY) + " lab layernorm --template 2>&1");
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.out, lab::template_text("layernorm"));
  const std::string q = fresh_folder("template") + "/q.cu";
  const auto wrote = laptime("lab quantize --template " + q);
  EXPECT_EQ(wrote.status, 0) << wrote.out;
  EXPECT_THAT(wrote.out, HasSubstr("laptime lab quantize --try " + q));
  EXPECT_EQ(run_shell("cat '" + q + "'").out, lab::template_text("quantize"));
  const auto again = laptime("lab quantize --template " + q);
  EXPECT_EQ(again.status, 1);
  EXPECT_EQ(again.out,
            "laptime: " + q + " exists: --template writes a new file and replaces none (give another name).\n");
}

// Without a GPU (CUDA_VISIBLE_DEVICES empty hides any), --try compiles the file, then refuses in one
// sentence; a compile error is the compiler's own words, then one sentence; nothing is left behind.
TEST(LabCli, TryWithoutAGpuCompilesThenRefuses) {
  const std::string dir = fresh_folder("try");
  const std::string run = "env CUDA_VISIBLE_DEVICES= LAPTIME_CACHE_DIR='" + dir + "/cache' " + LAPTIME_BINARY;
  ASSERT_EQ(run_shell(run + " lab layernorm --template " + dir + "/t.cu").status, 0);
  const auto r = run_shell(run + " lab layernorm --try " + dir + "/t.cu 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("laptime: " + dir +
                               "/t.cu compiles for sm_90a and declares layernorm as the lab calls it; "
                               "running it needs a GPU: no usable CUDA GPU"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  // (run_shell runs a program under timeout: shell syntax goes through sh -c.)
  run_shell("sh -c '{ head -60 " + dir + "/t.cu; echo \"  this is not C++;\"; tail -n +61 " + dir + "/t.cu; } > " +
            dir + "/bad.cu'");
  const auto bad = run_shell(run + " lab layernorm --try " + dir + "/bad.cu 2>&1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.out, HasSubstr(dir + "/bad.cu(61): error"));
  EXPECT_THAT(bad.out, HasSubstr("laptime: " + dir + "/bad.cu did not compile for sm_90a (NVRTC "));
  EXPECT_THAT(bad.out, HasSubstr("the compiler's messages are above"));
  const auto none = run_shell(run + " lab layernorm --try " + dir + "/nope.cu 2>&1");
  EXPECT_EQ(none.out, "laptime: cannot read the kernel file " + dir + "/nope.cu: No such file or directory.\n");
  // Nothing left behind: the two files, and the good compile's binary in the cache.
  EXPECT_EQ(
      run_shell("sh -c 'cd " + dir + " && find . -type f | sed \"s|/[0-9a-f]*[.]cubin$|/KEY.cubin|\" | sort'").out,
      "./bad.cu\n./cache/nvrtc/KEY.cubin\n./t.cu\n");
}

TEST(LabCli, KernelsCommandProfilesTheFile) {
  const auto k = laptime("kernels --command lab layernorm --try my.cu");
  EXPECT_EQ(k.status, 0) << k.out;
  EXPECT_THAT(k.out, HasSubstr("laptime lab layernorm --try my.cu --once --json lab_layernorm.json"));
  EXPECT_THAT(k.out, HasSubstr("each --try file is one more rung"));
  const auto refused = laptime("kernels --command gpt2 --try my.cu");
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.out, HasSubstr("--try goes with --command lab KERNEL"));
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

// A learner's file's rung comes back from its child process as JSON: every field the report and
// the speed-ups read survives the round trip.
TEST(LabReport, AFilesRungRoundTripsThroughJson) {
  lab::VersionResult v;
  v.id = "ln_v2.cu";
  v.title = "your file dir/ln_v2.cu";
  v.file = "dir/ln_v2.cu";
  v.sha256 = std::string(64, 'c');
  v.compiled = "sm_90a, NVRTC 13.0, 0.41 s";
  v.checks.push_back({"rows=1 C=1 (one element)", "zeros", true, false, 2e-3, 8e-3, 1, 1, ""});
  v.checks.push_back({"rows=37 C=771 (odd rows and C)", "huge", false, false, NAN, 8e-3, 0, 37, "a fault."});
  lab::TimingRow t;
  t.shape = 1, t.runs = 125, t.converged = true, t.median_us = 15.5, t.lo_us = 15.4, t.hi_us = 15.7;
  t.hot_runs = 100, t.hot_converged = false, t.hot_median_us = 9.5, t.hot_lo_us = 9.4, t.hot_hi_us = 9.9;
  t.gbps = 1600, t.dram_pct = 38.1, t.compute_pct = -1, t.vs_production = 0.8, t.vs_best = 0.75;
  t.sm_mhz = 1980, t.sm_mhz_min = 1755, t.throttle = 0x4;
  v.timings.push_back(t);
  const lab::VersionResult back = lab::version_from_json(lab::version_to_json(v));
  EXPECT_EQ(back.id, v.id);
  EXPECT_EQ(back.file, v.file);
  EXPECT_EQ(back.sha256, v.sha256);
  EXPECT_EQ(back.compiled, v.compiled);
  EXPECT_TRUE(back.is_file());
  ASSERT_EQ(back.checks.size(), 2u);
  EXPECT_TRUE(std::isnan(back.checks[1].rel_error));
  EXPECT_EQ(back.checks[1].detail, "a fault.");
  EXPECT_FALSE(back.passed());
  ASSERT_EQ(back.timings.size(), 1u);
  const lab::TimingRow& b = back.timings[0];
  EXPECT_EQ(b.shape, 1);
  EXPECT_EQ(b.runs, 125);
  EXPECT_EQ(b.median_us, 15.5);
  EXPECT_EQ(b.hot_median_us, 9.5);
  EXPECT_FALSE(b.hot_converged);
  EXPECT_EQ(b.dram_pct, 38.1);
  EXPECT_EQ(b.compute_pct, -1);
  EXPECT_EQ(b.vs_best, 0.75);
  EXPECT_EQ(b.vs_previous, 0);
  EXPECT_EQ(b.sm_mhz_min, 1755);
  EXPECT_EQ(b.throttle, 0x4u);
}

// The speed-ups at a shape: over the ladder's version before (never a file's), production and the
// ladder's fastest, computed from the medians alone.
TEST(LabReport, SpeedUpsOverProductionAndTheBestRung) {
  lab::LabResult r;
  r.shapes.push_back({{"s", {1}}, "x=1", {}});
  const auto version = [](const std::string& id, bool production, const std::string& file, double us) {
    lab::VersionResult v;
    v.id = id, v.production = production, v.file = file;
    lab::TimingRow t;
    t.median_us = us;
    v.timings.push_back(t);
    return v;
  };
  r.versions = {version("v1", false, "", 100), version("v2", false, "", 10), version("v3", true, "", 20),
                version("mine.cu", false, "mine.cu", 5)};
  lab::speedups(r, 0);
  EXPECT_EQ(r.versions[1].timings[0].vs_previous, 10.0);
  EXPECT_EQ(r.versions[2].timings[0].vs_previous, 0.5);
  EXPECT_EQ(r.versions[2].timings[0].vs_best, 0.5);  // v2 is the ladder's fastest
  EXPECT_EQ(r.versions[3].timings[0].vs_production, 4.0);
  EXPECT_EQ(r.versions[3].timings[0].vs_best, 2.0);
  EXPECT_EQ(r.versions[3].timings[0].vs_previous, 0.0);  // a file is no step of the ladder
}

// `laptime lab --all`'s summary: per kernel and shape the first version against production, and
// the geometric mean of the speed-ups.
TEST(LabReport, AllSummaryGeometricMean) {
  const auto kernel = [](const std::string& name, double first, double production, double pct) {
    lab::LabResult r;
    r.kernel = name;
    r.precision = "bf16";
    r.shapes.push_back({{"model", {1}}, "x=1", {100, 100, 0}});
    lab::VersionResult a, b;
    a.id = "v1", b.id = "v3", b.production = true;
    lab::TimingRow t;
    t.median_us = first;
    a.timings.push_back(t);
    t.median_us = production, t.dram_pct = pct;
    b.timings.push_back(t);
    r.versions = {a, b};
    return r;
  };
  const lab::AllResult a = lab::summarize_all({kernel("k1", 8, 2, 50), kernel("k2", 9, 1, 80)});
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[0].speedup, 4.0);
  EXPECT_EQ(a.rows[1].speedup, 9.0);
  EXPECT_EQ(a.rows[0].roof, "DRAM");
  EXPECT_EQ(a.rows[0].roof_pct, 50);
  EXPECT_EQ(a.speedups, 2);
  EXPECT_NEAR(a.geomean_speedup, 6.0, 1e-12);
  const nlohmann::json j = lab::all_to_json(a);
  EXPECT_EQ(j["schema"], "laptime.lab.all/1");
  EXPECT_NEAR(j["geomean_speedup"].get<double>(), 6.0, 1e-12);
  EXPECT_EQ(j["kernels"].size(), 2u);
}

}  // namespace
}  // namespace laptime
