// The analyzer at scale and on traces built to cost it memory or time,
// host-only. The traces come from tests/fixtures/make_scale_hostile.py and grow_trace.py, which
// CTest runs first into LAPTIME_SCALE_TRACES (tests/trace.cmake). Each heavy case runs in a
// child process under RLIMIT_AS (its address space now plus a budget) and RLIMIT_CPU, so a
// regression fails as a bad_alloc or a signal, never as a slow or swapping test run; no
// timing is asserted.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <new>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/compare/diff.h"
#include "trace/write/diff_json.h"
#include "trace/write/diff_text.h"
#include "trace/write/analysis_json.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/processes.h"
#include "trace/analyses/analyze.h"
#include "trace/write/analysis_text.h"
#include "trace/ncu/ncu_csv.h"
#include "trace/ncu/ncu_layers.h"
#include "trace/write/perfetto.h"

namespace laptime::trace {
namespace {

using testing_support::bounded;
using testing_support::error_of;
using testing_support::report_text;

std::string scale_trace(const std::string& name) {
  const char* dir = std::getenv("LAPTIME_SCALE_TRACES");
  return std::string(dir && *dir ? dir : "scale_traces") + "/" + name + ".sqlite";
}

bool have(const std::string& path) { return static_cast<bool>(std::ifstream(path)); }

#define REQUIRE_TRACE(path) \
  if (!have(path)) GTEST_SKIP() << path << " is missing: CTest writes it first (trace.scale_traces)";

// Everything laptime analyze and diff do with a trace, outputs thrown away: for each process with
// iterations, as both read a capture of several (trace/analyses/processes.h).
void analyze_and_diff(const std::string& path, const std::string& range = "") {
  const Trace t = load_nsys_sqlite(path);
  const TraceJoin j(t);
  std::vector<std::optional<uint32_t>> pids;
  for (const ProcessIterations& p : choose_processes(j, range, std::nullopt).reported) pids.push_back(p.pid);
  if (pids.size() < 2) pids.assign(1, std::nullopt);
  for (const std::optional<uint32_t>& pid : pids) {
    ReportOptions o;
    o.range = range;
    o.pid = pid;
    const Analysis a = analyze(j, o);
    std::FILE* null = std::fopen("/dev/null", "w");
    print_report(a, null);
    std::fclose(null);
    (void)to_json(a).dump();
    DiffOptions d;
    d.range = range;
    d.resamples = 200;
    const Diff diff = diff_runs(run_from_trace(j, d, path, pid), run_from_trace(j, d, path, pid), d);
    null = std::fopen("/dev/null", "w");
    print_diff(diff, null);
    std::fclose(null);
    (void)diff_to_json(diff).dump();
  }
}

constexpr size_t kMiB = 1 << 20;

// --- Schemas that are not an export -------------------------------------------------------------

TEST(ScaleHostile, ARecursiveViewIsNotAnExport) {
  const std::string p = scale_trace("scale_view_recursive");
  REQUIRE_TRACE(p);
  std::string error;
  EXPECT_EQ(bounded(256 * kMiB, 20, [&] { load_nsys_sqlite(p); }), "");
  error = error_of([&] { load_nsys_sqlite(p); });
  EXPECT_NE(error.find("not an Nsight Systems export"), std::string::npos) << error;
  EXPECT_NE(error.find("NVTX_EVENTS is a view"), std::string::npos) << error;
}

TEST(ScaleHostile, AViewInPlaceOfATableIsNotAnExport) {
  const std::string p = scale_trace("scale_view_kernels");
  REQUIRE_TRACE(p);
  const std::string error = error_of([&] { load_nsys_sqlite(p); });
  EXPECT_NE(error.find("CUPTI_ACTIVITY_KIND_KERNEL is a view"), std::string::npos) << error;
}

TEST(ScaleHostile, AVirtualTableIsNotAnExport) {
  const std::string p = scale_trace("scale_virtual");
  REQUIRE_TRACE(p);
  const std::string error = error_of([&] { load_nsys_sqlite(p); });
  EXPECT_NE(error.find("NVTX_EVENTS is a virtual table"), std::string::npos) << error;
  EXPECT_NE(error.find("not an Nsight Systems export"), std::string::npos) << error;
}

// --- Bounded memory and time ------------------------------------------------------------------------

class Bounded : public testing::TestWithParam<const char*> {};

TEST_P(Bounded, AnalyzeAndDiffStayWithinAFewHundredMegabytes) {
  const std::string p = scale_trace(GetParam());
  REQUIRE_TRACE(p);
  EXPECT_EQ(bounded(320 * kMiB, 30, [&] { analyze_and_diff(p); }), "") << p;
}

INSTANTIATE_TEST_SUITE_P(ScaleHostile, Bounded,
                         testing::Values("scale_digit_runs", "scale_long_kernel_name", "scale_deep_nesting",
                                         "scale_long_range_name", "scale_many_names", "scale_long_names_everywhere"));

// 60,000 closed nested ranges before 60,000 launches: the innermost range of a
// launch is a binary search, not a walk up 60,000 closed parents per launch (15 s of CPU for
// analyze alone before).
TEST(ScaleHostile, ClosedNestingBeforeTheLaunchesStaysLinear) {
  const std::string p = scale_trace("scale_closed_nesting");
  REQUIRE_TRACE(p);
  EXPECT_EQ(bounded(320 * kMiB, 8, [&] { analyze_and_diff(p); }), "") << p;
  const Trace t = load_nsys_sqlite(p);
  const TraceJoin j(t);
  ReportOptions o;
  o.skip_warmup = 0;
  const Analysis a = analyze(j, o);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.iterations[0].kernels, 60000u);
  // Every launch sits in the iteration range itself, none in a closed `block`.
  size_t in_blocks = 0;
  for (const GpuOp& op : j.ops())
    in_blocks += op.range < 0 || t.nvtx[op.range].text.str().rfind("Forward Pass Iter", 0) != 0;
  EXPECT_EQ(in_blocks, 0u);
}

// 3,000,000 minimal Nsight Compute rows (once 3.3 GB, an array of every metric
// and two vectors per row): read and grouped into layers within 600 MB, the rows as lean as the
// nsys reader's.
TEST(ScaleHostile, ThreeMillionNcuRowsStayLean) {
  const std::string path = testing_support::temp_path("scale", "ncu_3m.csv");
  {
    std::ofstream f(path);
    f << "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n";
    for (int i = 0; i < 3000000; ++i) f << '"' << i << "\",\"k\",\"" << 1000 + i % 7 << "\"\n";
  }
  EXPECT_EQ(bounded(600 * kMiB, 30,
                    [&] {
                      const NcuReport r = read_ncu_report(path);
                      const NcuLayers l = ncu_layers(r, {}, nullptr, nullptr);
                      if (l.kernels != 3000000u) _exit(5);
                    }),
            "");
  // And its JSON, every kernel's row in it, written as text row by row (a tree was 3 GB).
  EXPECT_EQ(bounded(2048 * kMiB, 60,
                    [&] {
                      const NcuLayers l = ncu_layers(read_ncu_report(path), {}, nullptr, nullptr);
                      DeferredKernelLists rows;
                      const std::string text = rows.text(ncu_layers_to_json(l, &rows));
                      if (text.find("\"kernel_list\": [") == std::string::npos) _exit(6);
                    }),
            "");
  std::remove(path.c_str());
}

// innermost_range against its definition, walked naively: the last range started at or before
// the time, or its first ancestor still open, on random nested and overlapping ranges.
TEST(ScaleHostile, InnermostRangeIsItsDefinition) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t n) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return static_cast<Ns>(seed % n);
  };
  for (int trial = 0; trial < 20; ++trial) {
    Trace t;
    for (int i = 0; i < 300; ++i) {
      NvtxEvent r;
      r.pid = 1;
      r.tid = 1 + static_cast<uint32_t>(next(2));
      r.start = next(1000);
      r.end = r.start + next(trial % 2 ? 40 : 400);  // short ranges overlap without nesting
      r.text = t.intern("r" + std::to_string(i));
      t.nvtx.push_back(r);
    }
    t.finalize();
    const TraceJoin j(t);
    for (uint32_t tid : {1u, 2u, 3u})
      for (Ns at = -1; at <= 1450; ++at) {
        int want = -1;
        for (size_t r = 0; r < t.nvtx.size(); ++r)
          if (t.nvtx[r].tid == tid && t.nvtx[r].start <= at) want = static_cast<int>(r);
        while (want >= 0 && t.nvtx[want].end < at) want = t.nvtx[want].parent;
        ASSERT_EQ(j.innermost_range(1, tid, at), want) << "trial " << trial << " tid " << tid << " at " << at;
      }
  }
}

TEST(ScaleHostile, ARegexRangeAgainstAHundredThousandCharacterName) {
  const std::string p = scale_trace("scale_long_range_name");
  REQUIRE_TRACE(p);
  EXPECT_EQ(bounded(320 * kMiB, 30, [&] { analyze_and_diff(p, "re:.*Iter.*"); }), "");
  const Trace t = load_nsys_sqlite(p);
  const TraceJoin j(t);
  ReportOptions o;
  o.range = "re:.*Iter.*";
  const Analysis a = analyze(j, o);
  // The six `Forward Pass Iter N` ranges and the long name, which matches too (RE2 is linear in
  // the text: nothing to leave out).
  EXPECT_EQ(a.iterations.size(), 7u);
}

TEST(ScaleHostile, OneLongKernelNameIsHeldOnce) {
  const std::string p = scale_trace("scale_long_kernel_name");
  REQUIRE_TRACE(p);
  const Trace t = load_nsys_sqlite(p);
  ASSERT_EQ(t.kernels.size(), 2500u);
  for (const Kernel& k : t.kernels) {
    EXPECT_EQ(k.name.key(), t.kernels[0].name.key());
    EXPECT_EQ(k.short_name.key(), t.kernels[0].name.key());
  }
  EXPECT_GT(t.kernels[0].name.size(), 1u << 20);
}

TEST(ScaleHostile, DeepNestingStillFindsTheLayers) {
  const std::string p = scale_trace("scale_deep_nesting");
  REQUIRE_TRACE(p);
  const Trace t = load_nsys_sqlite(p);
  const TraceJoin j(t);
  ReportOptions o;
  o.skip_warmup = 0;
  const Analysis a = analyze(j, o);
  ASSERT_EQ(a.iterations.size(), 2u);
  EXPECT_EQ(a.iterations[0].kernels, 6000u);
  EXPECT_EQ(a.iterations[1].kernels, 6000u);
  // Every kernel counts in its innermost range: `block 5999` in the nested iteration, one
  // `block d` each in the flat one; folded, all are `block *`.
  ASSERT_FALSE(a.range_patterns.empty());
  EXPECT_EQ(a.range_patterns[0].range, "block *");
  EXPECT_EQ(a.range_patterns[0].count, 12000u);
}

// The case as written: two processes, loops of 100 us, the second 50 us later. Read as one,
// start-to-next was 0.050 ms; each process's own is 0.100 (make_scale_hostile.py's layout).
TEST(ScaleHostile, TwoProcessesAreTwoLoopsOfTheirOwnLap) {
  const std::string p = scale_trace("scale_two_processes");
  REQUIRE_TRACE(p);
  const Trace t = load_nsys_sqlite(p);
  const TraceJoin j(t);
  const ProcessChoice c = choose_processes(j, "", std::nullopt);
  ASSERT_EQ(c.reported.size(), 2u);
  for (uint32_t pid : {100u, 200u}) {
    ReportOptions o;
    o.pid = pid;
    const Analysis a = analyze(j, o);
    EXPECT_EQ(a.iterations.size(), 8u) << pid;
    EXPECT_NEAR(a.period_ms.mean, 0.100, 1e-12) << pid;
  }
}

// --- At scale: a 10^5-kernel capture within a memory bound -------------------------------------------

TEST(Scale, AHundredThousandKernelsAnalyzeWithinTheMemoryBound) {
  const std::string p = scale_trace("grown_1e5");
  REQUIRE_TRACE(p);
  // 10^5 kernels (2.1 * 10^5 API calls): within 200 bytes a kernel held, and SQLite's pages,
  // the text and JSON reports and the allocator's slack on top. The bound sits about a quarter above
  // what the analyzer needs (docs/history/analyzer.md), so more bytes a kernel fail here.
  EXPECT_EQ(bounded(20 * kMiB + 20 * kMiB, 60,
                    [&] {
                      const Trace t = load_nsys_sqlite(p);
                      const TraceJoin j(t);
                      const Analysis a = analyze(j, ReportOptions{});
                      std::FILE* null = std::fopen("/dev/null", "w");
                      print_report(a, null);
                      std::fclose(null);
                      (void)to_json(a).dump();
                    }),
            "");
}

// The Perfetto export of 10^5 kernels (4.3 * 10^5 events): streamed, so within the analysis's own
// bound and a few megabytes of buffer, where a JSON tree of the whole trace took 80 times the rows
// (8 GB at 10^6); by default the steady iterations around the median one, at most kPerfettoEvents
// events, every one overlapping the window; with --window all, every event.
TEST(Scale, APerfettoExportIsStreamedAndWindowed) {
  const std::string p = scale_trace("grown_1e5");
  REQUIRE_TRACE(p);
  const std::string dir = testing::TempDir();
  const std::string windowed = dir + "laptime_scale_perfetto_auto.json",
                    whole = dir + "laptime_scale_perfetto_all.json";
  auto export_to = [&](const std::string& path, const char* spec) {
    const Trace t = load_nsys_sqlite(p);
    const TraceJoin j(t);
    const Analysis a = analyze(j, ReportOptions{});
    write_perfetto(j, path, perfetto_window(j, {&a}, spec));
  };
  EXPECT_EQ(bounded(20 * kMiB + 20 * kMiB + 24 * kMiB, 60, [&] { export_to(windowed, "auto"); }), "");
  EXPECT_EQ(bounded(20 * kMiB + 20 * kMiB + 24 * kMiB, 60, [&] { export_to(whole, "all"); }), "");
  const Trace t = load_nsys_sqlite(p);
  const TraceJoin j(t);
  const Analysis a = analyze(j, ReportOptions{});
  const PerfettoWindow w = perfetto_window(j, {&a}, "auto");
  ASSERT_FALSE(w.all) << "10^5 kernels are past the budget";
  EXPECT_NE(w.rule.find("around the median one"), std::string::npos) << w.rule;
  size_t events = 0;
  const nlohmann::json doc = nlohmann::json::parse(testing_support::read_file(windowed));
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    ++events;
    const double ts = e["ts"].get<double>() * 1e3, end = ts + (e.contains("dur") ? e["dur"].get<double>() * 1e3 : 0);
    EXPECT_GE(end, double(w.lo) - 1);
    EXPECT_LE(ts, double(w.hi) + 1);
  }
  EXPECT_LE(events, kPerfettoEvents);
  EXPECT_GT(events, kPerfettoEvents / 2) << "the window holds as many iterations as fit";
  size_t launched = 0;
  for (const GpuOp& op : j.ops()) launched += op.api >= 0;
  size_t all = 0;
  const nlohmann::json every = nlohmann::json::parse(testing_support::read_file(whole));
  for (const nlohmann::json& e : every["traceEvents"]) all += e["ph"] != "M";
  EXPECT_EQ(all, t.nvtx.size() + t.api_calls.size() + j.ops().size() + 2 * launched);
  std::remove(windowed.c_str());
  std::remove(whole.c_str());
}

// diff on a trace with one NVTX range per op (emit_nvtx), 10^5 kernels in 421 steady
// iterations, --by block: every op is a layer of its own, in one iteration. The dense
// per-layer series and the per-row bootstrap made that 4 GB and more than a minute (killed);
// sparse series and the shared resampled medians keep it linear: within the bounds, every
// layer a row, the text cut to --top's rows.
TEST(Scale, DiffOfAnEmitNvtxTraceByBlockStaysLinear) {
  const std::string p = scale_trace("grown_emit_1e5");
  REQUIRE_TRACE(p);
  EXPECT_EQ(bounded(640 * kMiB, 60,
                    [&] {
                      const Trace t = load_nsys_sqlite(p);
                      const TraceJoin j(t);
                      DiffOptions d;
                      d.by = LayerKey::Block;  // the default 10,000 resamples
                      const Diff diff = diff_runs(run_from_trace(j, d, p), run_from_trace(j, d, p), d);
                      if (diff.rows.size() < 100000) _exit(5);  // a layer per op
                      const std::string text =
                          testing_support::printed([&diff](std::FILE* out) { print_diff(diff, out); });
                      if (text.size() > 64 * 1024 || text.find("more rows (--top 0 for all)") == std::string::npos)
                        _exit(6);
                      (void)diff_to_json(diff).dump();
                    }),
            "");
}

}  // namespace
}  // namespace laptime::trace
