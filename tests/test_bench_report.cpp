// bench/bench_result: the bench's result apart from its presentation. Host only: a result is
// made by hand (or from a report an H200 run committed) and its text and JSON are checked.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench_result.h"
#include "tests/support/golden.h"

namespace laptime {
namespace {

// What print_bench_header + print_bench write, through an anonymous temporary file.
std::string text_of(const BenchResult& r) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::tmpfile(), &std::fclose);
  if (!f) return "(no temporary file)";
  print_bench_header(r, f.get());
  print_bench(r, f.get());
  std::rewind(f.get());
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;) s.append(buf, n);
  return s;
}

BenchLap lap(int index, bool warmup, float ms) {
  BenchLap l;
  l.index = index;
  l.warmup = warmup;
  l.ms = ms;
  return l;
}

BenchResult small_run() {
  BenchResult r;
  r.device = {"NVIDIA H200", 132, 1980, 3201, 139.80072021484375, "13.0", "13.0", "13.1", "13.1", "9.19", "9.19"};
  r.config.model = "gpt2";
  r.config.pitfall = "none";
  r.config.precision = "bf16";
  r.config.shape = "B=1 T=4 (4 tokens)";
  r.config.weights = "random (seed 0, GPT-2 small shapes)";
  r.config.params = 124439808;
  r.config.nvtx = "layer";
  r.config.stream = "created";
  r.config.warmup = 1;
  r.config.iters = 4;
  r.config.variant = "attention cudnn, GELU in the c_fc epilogue, GEMM algorithms: heuristic";
  r.trace = "t.sqlite";
  r.sidecars = {"t.layers.json"};
  r.laps = {lap(0, true, 9.5f), lap(1, false, 2.f), lap(2, false, 4.f), lap(3, false, 1.f), lap(4, false, 3.f)};
  r.flops_per_forward = 1e12;
  r.items_per_forward = 4;
  r.item_name = "tokens";
  r.enqueue_ms = 2.25;
  r.memory = {1u << 20, 3u << 20, 32u << 20, 1536u << 20};
  summarize(r);
  return r;
}

// Every line of the report for a run made by hand: median 2.5 ms of laps 2, 4, 1, 3, so 1600
// tokens/s, 400 TFLOP/s, and an enqueue of 90% of the lap, which is launch-bound.
TEST(BenchReport, TextOfAShortRun) {
  const BenchResult r = small_run();
  ASSERT_TRUE(r.steady);
  EXPECT_EQ(r.steady->median, 2.5);
  EXPECT_EQ(r.items_per_s, 1600.0);
  EXPECT_EQ(r.tflops, 400.0);
  EXPECT_EQ(
      text_of(r),
      "laptime bench gpt2\n"
      "  device      NVIDIA H200, 132 SMs, SM clock 1980 MHz, memory clock 3201 MHz, 140 GiB\n"
      "  software    driver 13.0, CUDA runtime 13.0, cuBLAS 13.1 (built with 13.1), cuDNN 9.19 (built with 9.19)\n"
      "  run         bf16, B=1 T=4 (4 tokens), eager, nvtx=layer, stream=created\n"
      "  weights     random (seed 0, GPT-2 small shapes), 124.4 M parameters\n"
      "  variant     attention cudnn, GELU in the c_fc epilogue, GEMM algorithms: heuristic\n"
      "  trace       t.sqlite (CUPTI; read it with `laptime analyze t.sqlite`)\n"
      "  layers      t.layers.json (FLOPs and bytes per NVTX range, for `laptime analyze`)\n"
      "\n"
      "  iteration   lap (ms)\n"
      "      0 warmup     9.500\n"
      "      1            2.000\n"
      "      2            4.000\n"
      "      3            1.000\n"
      "      4            3.000\n"
      "\n"
      "  steady state over 4 iterations (ms): mean 2.500  median 2.500  p10 1.300  p90 3.700  min 1.000  "
      "max 4.000  stddev 1.291\n"
      "  throughput  1600 tokens/s\n"
      "  compute     1000.0 GFLOP per forward, 400.0 TFLOP/s achieved\n"
      "  host        2.250 ms to enqueue one forward on an idle GPU (90% of the lap: launch-bound)\n"
      "  memory      weights 1.0 MiB, activations 3.0 MiB, workspace 32.0 MiB, device in use 1536.0 MiB\n"
      "\n"
      "lap time: 2.500 ms (median of 4, bf16, eager)\n");
}

// With --pitfall sync the probe's forwards wait for the GPU at every layer end: the host line
// says so instead of calling the run launch-bound (analyze on its trace says sync-bound).
TEST(BenchReport, PitfallSyncEnqueueIsNotCalledLaunchBound) {
  BenchResult r = small_run();
  r.config.pitfall = "sync";
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  host        2.250 ms to enqueue one forward on an idle GPU (90% of the lap; --pitfall sync's "
                   "waits for the GPU are inside it, so it is no launch cost: `laptime analyze` on a trace tells them "
                   "apart)\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("launch-bound"), std::string::npos) << t;
}

// Plans print one a line under one label; a graph run says so in the run line and the last.
TEST(BenchReport, PlansAndGraphMode) {
  BenchResult r = small_run();
  r.config.graph = true;
  r.config.variant.clear();
  r.config.plans = {"conv1: a", "layer1.0.conv1: b"};
  r.trace.clear();
  r.sidecars.clear();
  r.enqueue_ms = 0.5;
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  run         bf16, B=1 T=4 (4 tokens), CUDA Graph, nvtx=layer, stream=created\n"
                   "  weights     random (seed 0, GPT-2 small shapes), 124.4 M parameters\n"
                   "  plans       conv1: a\n"
                   "              layer1.0.conv1: b\n"
                   "\n  iteration"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("(20% of the lap, GPU-bound)"), std::string::npos) << t;
  EXPECT_NE(t.find("lap time: 2.500 ms (median of 4, bf16, graph)\n"), std::string::npos) << t;
  const nlohmann::json j = bench_to_json(r);
  EXPECT_EQ(j["config"]["mode"], "graph");
  EXPECT_EQ(j["config"]["plans"], nlohmann::json({"conv1: a", "layer1.0.conv1: b"}));
  EXPECT_FALSE(j["config"].contains("variant"));
  EXPECT_FALSE(j.contains("interrupted"));
}

// The LAPTIME_* switches a run had: one line after the variant, in the order given, and an
// object in the JSON's config; no line when none was set (TextOfAShortRun), and the object empty.
TEST(BenchReport, SwitchesSetAreNamed) {
  BenchResult r = small_run();
  r.config.switches = {{"LAPTIME_CUTLASS_PDL", "on"}, {"LAPTIME_RESNET_SHORTCUT", "folded"}};
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  variant     attention cudnn, GELU in the c_fc epilogue, GEMM algorithms: heuristic\n"
                   "  switches    LAPTIME_CUTLASS_PDL=on, LAPTIME_RESNET_SHORTCUT=folded\n"
                   "  trace       "),
            std::string::npos)
      << t;
  const nlohmann::json j = bench_to_json(r);
  EXPECT_EQ(j["config"]["switches"],
            nlohmann::json({{"LAPTIME_CUTLASS_PDL", "on"}, {"LAPTIME_RESNET_SHORTCUT", "folded"}}));
  r.config.switches.clear();
  EXPECT_EQ(text_of(r).find("switches"), std::string::npos);
  EXPECT_EQ(bench_to_json(r)["config"]["switches"], nlohmann::json::object());
}

// --kernel NAME=FILE.cu: each learner's file in the JSON's config (docs/schema/bench-1's
// kernel_files, which tests/schema checks in this shape), and no member without one.
TEST(BenchReport, KernelFilesAreNamed) {
  BenchResult r = small_run();
  EXPECT_FALSE(bench_to_json(r)["config"].contains("kernel_files"));
  const std::string sha(64, 'a');
  r.config.kernel_files = {{"layernorm", "my \"ln\".cu", sha}};
  EXPECT_EQ(bench_to_json(r)["config"]["kernel_files"],
            nlohmann::json::parse(R"([{"kernel": "layernorm", "path": "my \"ln\".cu", "sha256": ")" + sha + R"("}])"));
}

// Ctrl-C during warm-up: the laps done, a sentence instead of statistics, and a JSON report
// with the configuration, the laps and `interrupted`, nothing measured.
TEST(BenchReport, InterruptedDuringWarmup) {
  BenchResult r = small_run();
  r.laps.resize(1);
  r.interrupted = true;
  r.enqueue_ms.reset();
  summarize(r);
  EXPECT_FALSE(r.steady);
  const std::string t = text_of(r);
  EXPECT_NE(t.find("      0 warmup     9.500\n\n  interrupted after 1 iteration, all warm-up: no steady-state "
                   "statistics\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("lap time"), std::string::npos);
  const nlohmann::json j = bench_to_json(r);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["iterations"].size(), 1u);
  for (const char* k : {"steady_ms", "throughput", "flops_per_forward", "tflops", "enqueue_ms", "memory_bytes"})
    EXPECT_FALSE(j.contains(k)) << k;
}

// A report an H200 run wrote before the bench kept its result apart (run 3, ResNet-50 bf16 B1
// --graph): the same result, summarized again and written again, is the same JSON, every
// statistic to the last bit.
TEST(BenchReport, ACommittedReportIsReproduced) {
  const std::string path = test::source_dir() + "/results/2026-11-30-run3-resnet50/laptime_resnet50_bf16_b1_graph.json";
  std::ifstream f(path);
  ASSERT_TRUE(f) << path;
  const nlohmann::json want = nlohmann::json::parse(f);
  BenchResult r;
  const nlohmann::json& d = want["device"];
  r.device = {d["name"],          d["sm_count"],       d["sm_clock_mhz"], d["memory_clock_mhz"],
              d["memory_gib"],    d["driver"],         d["cuda_runtime"], d["cublas_compiled"],
              d["cublas_loaded"], d["cudnn_compiled"], d["cudnn_loaded"]};
  const nlohmann::json& c = want["config"];
  r.config.model = c["model"];
  r.config.pitfall = c["pitfall"];
  r.config.precision = c["precision"];
  r.config.shape = c["shape"];
  r.config.weights = c["weights"];
  r.config.params = c["params"];
  r.config.graph = c["mode"] == "graph";
  r.config.nvtx = c["nvtx"];
  r.config.stream = c["stream"];
  r.config.warmup = c["warmup"];
  r.config.iters = c["iters"];
  r.config.variant = c.value("variant", "");
  r.config.plans = c.value("plans", std::vector<std::string>{});
  for (const auto& [name, value] : c.value("switches", nlohmann::json::object()).items())
    r.config.switches.emplace_back(name, value.get<std::string>());
  for (const nlohmann::json& l : want["iterations"])
    r.laps.push_back(lap(l["index"].get<int>(), l["warmup"].get<bool>(), l["lap_ms"].get<float>()));
  r.flops_per_forward = want["flops_per_forward"];
  r.items_per_forward = 1;  // B=1 images
  r.item_name = want["throughput"]["item"];
  r.enqueue_ms = want["enqueue_ms"].get<double>();
  const nlohmann::json& m = want["memory_bytes"];
  r.memory = {m["weights"], m["activations"], m["workspace"], m["device_in_use"]};
  summarize(r);
  // The one field added since: the switches the run had, none (the bench now records them
  // always, so that `laptime diff` can tell none from unrecorded).
  nlohmann::json now = want;
  if (!now["config"].contains("switches")) now["config"]["switches"] = nlohmann::json::object();
  EXPECT_EQ(bench_to_json(r), now);
  EXPECT_EQ(bench_to_json(r).dump(2), now.dump(2));
}

// The clock under the laps (bench/clocks.h): laps 1-2 at 1980 MHz, laps 3-4 at 1830 with the
// power cap (0x4) and, inside lap 4, one reading at 1815; the warm-up lap's readings say idle
// (0x1), which is no throttle. Each lap gets the mean of its readings; the report counts the
// throttled steady laps and compares their median lap with the others'.
std::vector<ClockSample> clock_readings() {
  std::vector<ClockSample> s;
  for (double t = 0.25; t < 9.5; t += 0.5) s.push_back({t, 1980, 0x1});  // warm-up, 0-9.5 ms: 19
  for (double t = 9.75; t < 16.0; t += 0.5) s.push_back({t, 1980, 0});   // laps 1, 2 and lap 3's start: 13
  for (double t = 16.25; t < 24.0; t += 0.5) s.push_back({t, 1830, kClockSwPowerCap});  // 16
  s.push_back({22.5, 1815, kClockSwPowerCap});                                          // 49 in all
  return s;
}

// Lap i's [start, end] for small_run's laps, back to back from 0.
std::vector<std::pair<double, double>> small_run_spans(const BenchResult& r) {
  std::vector<std::pair<double, double>> spans;
  double t = 0;
  for (const BenchLap& l : r.laps) {
    spans.emplace_back(t, t + l.ms);
    t += l.ms;
  }
  return spans;
}

TEST(BenchReport, ClockedLapsSayWhichRanThrottled) {
  BenchResult r = small_run();  // laps 9.5 | 2, 4, 3, 5 back to back: 9.5-11.5, -15.5, -18.5, -23.5
  r.laps[3].ms = 3.f;
  r.laps[4].ms = 5.f;
  summarize(r);
  assign_clocks(r, small_run_spans(r), clock_readings(), 700);
  ASSERT_TRUE(r.clocks);
  EXPECT_EQ(r.clocks->samples, clock_readings().size());
  EXPECT_EQ(r.clocks->reasons, kClockSwPowerCap);
  EXPECT_EQ(r.laps[0].sm_mhz, 1980);
  EXPECT_FALSE(r.laps[0].throttled);  // idle is not a throttle
  EXPECT_EQ(r.laps[1].sm_mhz, 1980);
  EXPECT_FALSE(r.laps[1].throttled);
  EXPECT_EQ(r.laps[2].sm_mhz, 1980);  // 11.5-15.5
  EXPECT_FALSE(r.laps[2].throttled);
  EXPECT_EQ(r.laps[3].sm_mhz, 1855);  // 15.5-18.5: 1980 at 15.75, five 1830s: 11130 / 6; the cap in it
  EXPECT_TRUE(r.laps[3].throttled);
  EXPECT_EQ(r.laps[4].sm_mhz, 1829);  // 18.5-23.5: ten 1830s and the 1815 at 22.5: 20115 / 11 = 1828.6
  EXPECT_TRUE(r.laps[4].throttled);
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  iteration   lap (ms)  SM MHz\n"
                   "      0 warmup     9.500    1980\n"
                   "      1            2.000    1980\n"
                   "      2            4.000    1980\n"
                   "      3            3.000    1855 throttled\n"
                   "      4            5.000    1829 throttled\n"),
            std::string::npos)
      << t;
  // Median of the throttled laps (3, 5) = 4; of the others (2, 4) = 3.
  // The steady laps' clocks 1980, 1980, 1855, 1829: median (1855 + 1980) / 2 = 1917.5, rounded.
  EXPECT_NE(t.find("  clock       SM 1829-1980 MHz over the steady laps (median 1918), read by NVML 49 times\n"
                   "              2 of 4 laps throttled by the power cap (the board's limit 700 W): their median lap "
                   "4.000 ms, the other 2 laps' 3.000 ms\n"
                   "\nlap time"),
            std::string::npos)
      << t;
  const nlohmann::json j = bench_to_json(r);
  EXPECT_EQ(j["iterations"][3]["sm_mhz"], 1855);
  EXPECT_EQ(j["iterations"][3]["throttled"], true);
  EXPECT_EQ(j["iterations"][1]["throttled"], false);
  EXPECT_EQ(
      j["clocks"],
      nlohmann::json({{"source", "NVML"}, {"samples", 49}, {"power_limit_w", 700}, {"throttled_by", "the power cap"}}));
}

// Laps shorter than the sampling take the nearest reading; every lap at one clock, none
// throttled, says so in one line.
TEST(BenchReport, ShortLapsTakeTheNearestReading) {
  BenchResult r = small_run();
  std::vector<std::pair<double, double>> spans;
  for (std::size_t i = 0; i < r.laps.size(); ++i) spans.emplace_back(0.1 * i, 0.1 * i + 0.05);
  assign_clocks(r, spans, {{0.0, 1965, 0}, {0.32, 1980, 0}}, 0);
  EXPECT_EQ(r.laps[0].sm_mhz, 1965);  // lap 0: 0.00-0.05, nearest 0.0
  EXPECT_EQ(r.laps[3].sm_mhz, 1980);  // lap 3: 0.30-0.35 holds 0.32
  EXPECT_EQ(r.laps[4].sm_mhz, 1980);  // lap 4: 0.40-0.45, nearest 0.32
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  clock       SM 1965-1980 MHz over the steady laps (median 1980), read by NVML 2 times\n"
                   "              no lap throttled\n"),
            std::string::npos)
      << t;
  assign_clocks(r, spans, {{0.0, 1980, 0}}, 0);
  EXPECT_NE(text_of(r).find("  clock       SM 1980 MHz in every steady lap, read by NVML 1 times\n"),
            std::string::npos);
}

// Every lap throttled: below the maximum when every reading was, else only that the cap held.
TEST(BenchReport, EveryLapThrottled) {
  BenchResult r = small_run();
  assign_clocks(r, small_run_spans(r), {{0.0, 1700, kClockSwPowerCap}, {100.0, 1700, kClockSwPowerCap}}, 700);
  EXPECT_NE(
      text_of(r).find("              4 of 4 laps throttled by the power cap (the board's limit 700 W): every lap ran "
                      "below the 1980 MHz maximum\n"),
      std::string::npos)
      << text_of(r);
  assign_clocks(r, small_run_spans(r), {{0.0, 1980, kClockSwThermal}, {100.0, 1980, kClockSwThermal}}, 0);
  EXPECT_NE(text_of(r).find("              4 of 4 laps throttled by a thermal slowdown\n"), std::string::npos)
      << text_of(r);
}

// No NVML: no clock column, one line saying why, and the JSON's reason.
TEST(BenchReport, ClockNotReadSaysWhy) {
  BenchResult r = small_run();
  r.clocks = BenchClocks{"libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded"};
  const std::string t = text_of(r);
  EXPECT_NE(t.find("  iteration   lap (ms)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  clock       not read: libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(bench_to_json(r)["clocks"],
            nlohmann::json({{"unavailable", "libnvidia-ml.so.1 (NVML, part of the driver) could not be loaded"}}));
  EXPECT_FALSE(bench_to_json(small_run()).contains("clocks"));
}

TEST(BenchReport, ThrottleWords) {
  EXPECT_EQ(throttle_words(0), "");
  EXPECT_EQ(throttle_words(0x1), "");  // idle
  EXPECT_EQ(throttle_words(kClockSwPowerCap), "the power cap");
  EXPECT_EQ(throttle_words(kClockSwPowerCap | kClockSwThermal | kClockHwSlowdown),
            "the power cap, a thermal slowdown and a hardware slowdown");
  EXPECT_EQ(throttle_words(kClockHwThermal | kClockHwPowerBrake), "the power brake and a thermal slowdown");
}

}  // namespace
}  // namespace laptime
