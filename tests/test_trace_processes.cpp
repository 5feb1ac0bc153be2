// Several processes in one capture (trace/analyses/processes.h): each process's loop found
// and analyzed on its own, checked against tests/fixtures/process_reference.py's figures for the
// traces make_process_traces.py writes (two ranks of one job, two programs at different rates, a
// process with iterations beside two without, a process that starts late); the command's text
// and JSON, --pid and its refusals, and diff's refusal and --pid-before/--pid-after pairing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/nsys_csv.h"
#include "tests/support/trace_testing.h"
#include "cli/analyze_command.h"
#include "cli/diff_command.h"
#include "trace/compare/diff_input.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/processes.h"
#include "trace/analyses/utilization.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::temp_path;

std::string temp(const std::string& name) { return temp_path("processes", name); }

const json& expected() {
  static const json e = json::parse(read_file(fixture("process_traces.expected.json")));
  return e;
}

std::string trace_of(const std::string& name) { return fixture("process_" + name + ".sqlite"); }

// Doubles the reference computes in Python from the same integers: equal but for rounding.
void expect_near(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want))) << what;
}

// One process's analysis against the reference: every iteration, then the steady figures.
void expect_matches_reference(const Analysis& a, const json& want, const std::string& who) {
  EXPECT_EQ(a.range_name, want["range"].get<std::string>()) << who;
  const json& its = want["iterations"];
  ASSERT_EQ(a.iterations.size(), its.size()) << who;
  for (size_t i = 0; i < its.size(); ++i) {
    const Iteration& it = a.iterations[i];
    const json& w = its[i];
    const std::string at = who + " iteration " + std::to_string(i);
    EXPECT_EQ(it.index, w["index"].get<uint64_t>()) << at;
    EXPECT_EQ(it.start, w["start_ns"].get<Ns>()) << at;
    EXPECT_EQ(it.duration(), w["host_ns"].get<Ns>()) << at;
    EXPECT_EQ(it.warmup, w["warmup"].get<bool>()) << at;
    EXPECT_EQ(it.host_ahead, w["host_ahead"].get<bool>()) << at;
    EXPECT_EQ(it.kernels, w["kernels"].get<size_t>()) << at;
    ASSERT_EQ(it.has_gpu, w.contains("gpu_start_ns")) << at;
    if (!it.has_gpu) continue;
    EXPECT_EQ(it.gpu_start, w["gpu_start_ns"].get<Ns>()) << at;
    EXPECT_EQ(it.gpu_span(), w["gpu_ns"].get<Ns>()) << at;
    EXPECT_EQ(it.busy, w["busy_ns"].get<Ns>()) << at;
  }
  EXPECT_EQ(a.steady_count, want["steady"].get<size_t>()) << who;
  EXPECT_EQ(a.lap_from_gpu, want["lap_from_gpu"].get<bool>()) << who;
  expect_near(a.lap_ms, want["lap_ms"], who + " lap");
  expect_near(a.host_ms.mean, want["host_ms_mean"], who + " host mean");
  expect_near(a.gpu_ms.median, want["gpu_ms_median"], who + " GPU median");
  expect_near(a.span_fill_pct.median, want["busy_pct_median"], who + " span fill median");
  expect_near(a.period_ms.mean, want["period_ms_mean"], who + " period mean");
  EXPECT_EQ(a.gpu_time, want["gpu_time_ns"].get<Ns>()) << who;
  Ns busy = 0;
  for (const Iteration& it : a.iterations)
    if (it.steady() && it.has_gpu) busy += it.busy;
  EXPECT_EQ(busy, want["busy_ns"].get<Ns>()) << who;
  EXPECT_EQ(a.syncs.size(), want["syncs"].get<size_t>()) << who;
}

class Processes : public testing::TestWithParam<std::string> {};

TEST_P(Processes, EachProcessIsItsOwnLoopAsTheReferenceComputesIt) {
  const json& want = expected().at(GetParam());
  const bool synthetic = GetParam().rfind("nsys_", 0) != 0;
  const Trace t = load_nsys_sqlite(fixture(want["file"]));
  const TraceJoin j(t);
  const ProcessChoice c = choose_processes(j, "", std::nullopt);
  std::vector<uint32_t> reported;
  for (const ProcessIterations& p : c.reported) reported.push_back(p.pid);
  EXPECT_EQ(reported, want["reported"].get<std::vector<uint32_t>>());
  for (const auto& [pid, figures] : want["processes"].items()) {
    ReportOptions o;
    o.pid = static_cast<uint32_t>(std::stoul(pid));
    const Analysis a = analyze(j, o);
    expect_matches_reference(a, figures, GetParam() + " process " + pid);
    // The other processes' kernels inside its idle time, and the note when they fill more than 1%.
    const Ns other =
        other_processes_in_idle(j, ops_by_iteration(j, find_iterations(j, "", o.pid)), a.iterations, *o.pid);
    EXPECT_EQ(other, figures["other_processes_in_idle_ns"].get<Ns>()) << pid;
    EXPECT_EQ(a.idle_in_iterations, figures["idle_ns"].get<Ns>()) << pid;
    const bool noted = std::any_of(a.notes.begin(), a.notes.end(), [](const std::string& n) {
      return n.rfind("Other processes' GPU work ran during ", 0) == 0;
    });
    EXPECT_EQ(noted, other * 100 > a.idle_in_iterations) << pid;
    // Its own kernels only: the union with the other processes' work (what one mixed report
    // counts) is more, in every synthetic trace of several (built so that the processes' kernels
    // overlap; the H200 capture's two loops happened not to).
    const bool others = want["processes"].size() + want["gpu_work_without_iterations"].size() > 1;
    if (synthetic && others && figures["busy_ns"].get<Ns>() > 0) {
      EXPECT_LT(figures["busy_ns"].get<Ns>(), figures["busy_all_processes_ns"].get<Ns>()) << pid;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Processes,
                         testing::Values("two_ranks", "two_programs", "one_without", "late_start", "many",
                                         "nsys_two_gpt2", "two_threads"));

// Two loops in one process, each on its own thread: not split (a process is the unit), but said.
TEST(Processes, TwoLoopsOnTwoThreadsOfOneProcessAreSaid) {
  const Trace t = load_nsys_sqlite(trace_of("two_threads"));
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});
  EXPECT_EQ(a.iterations.size(), 16u);
  EXPECT_NE(std::find(a.notes.begin(), a.notes.end(),
                      "The `forward` ranges run on 2 threads at once (main, worker; 15 ranges start while another "
                      "thread's is open): they are read as one loop, their iterations interleaved; name one thread's "
                      "ranges with --range if their names differ."),
            a.notes.end());
  // One thread's loop alone, or threads taking turns: no note.
  for (const char* name : {"two_ranks", "late_start"}) {
    const Trace t2 = load_nsys_sqlite(trace_of(name));
    const TraceJoin j2(t2);
    for (const ProcessIterations& p : choose_processes(j2, "", std::nullopt).reported)
      EXPECT_EQ(interleaved_threads_note(t2, p.set), "") << name;
  }
}

// The H200 capture of two `laptime bench gpt2` processes: every `forward` range nsys counts lies in
// exactly one process's loop (nsys stats' nvtx_sum, committed beside it).
TEST(Processes, TheTwoRanksOfTheRealCaptureSplitNsysCountOfForwardRanges) {
  const Trace t = load_nsys_sqlite(fixture("nsys/two_gpt2.sqlite"));
  const TraceJoin j(t);
  size_t count = 0;
  Ns total = 0;
  for (const ProcessIterations& p : choose_processes(j, "", std::nullopt).reported) {
    ReportOptions o;
    o.pid = p.pid;
    for (const Iteration& it : analyze(j, o).iterations) {
      ++count;
      total += it.duration();
    }
  }
  bool found = false;
  for (const auto& row : nsys_csv::table(fixture("nsys/two_gpt2_nvtx_sum.csv")))
    if (row.at("Range") == "laptime:forward") {
      found = true;
      EXPECT_EQ(count, std::stoul(row.at("Instances")));
      EXPECT_EQ(total, std::stoll(row.at("Total Time (ns)")));
    }
  EXPECT_TRUE(found);
}

// The real two-process capture: 3813's lag (range end to GPU end) sits at ~23 us for 30
// iterations but for one blip of 214 us at the 31st, when the other process's kernels held the GPU.
// A blip at the queue's depth is not a filling queue: both processes keep every iteration after
// warm-up, as their twin loops should (the rule before kept 2 of 3813's 24, reading the blip as
// the end of a climb), and neither is reported as a lap taken from the GPU.
TEST(Processes, ALagBlipOnASharedGpuIsNotAFillingQueue) {
  const Trace t = load_nsys_sqlite(fixture("nsys/two_gpt2.sqlite"));
  const TraceJoin j(t);
  std::vector<size_t> steady;
  for (const ProcessIterations& p : choose_processes(j, "", std::nullopt).reported) {
    ReportOptions o;
    o.pid = p.pid;
    const Analysis a = analyze(j, o);
    for (const Iteration& it : a.iterations)
      EXPECT_FALSE(it.host_ahead) << "pid " << p.pid << " iteration " << it.index;
    EXPECT_FALSE(a.lap_from_gpu) << "pid " << p.pid;
    steady.push_back(a.steady_count);
  }
  ASSERT_EQ(steady.size(), 2u);
  EXPECT_EQ(steady[0], steady[1]);
  EXPECT_GE(steady[0], 20u);
}

TEST(Processes, AGpuSharedWithAnotherProcessIsSaid) {
  const json& want = expected()["two_ranks"]["processes"]["4100"];
  const Trace t = load_nsys_sqlite(trace_of("two_ranks"));
  const TraceJoin j(t);
  ReportOptions o;
  o.pid = 4100;
  const Analysis a = analyze(j, o);
  const Ns other = want["other_processes_in_idle_ns"], idle = want["idle_ns"];
  char note[400];
  std::snprintf(note, sizeof note,
                "Other processes' GPU work ran during %.0f%% of this process's idle time inside its steady iterations "
                "(%.3f ms of %.3f ms, all steady iterations): the GPU is shared, so the idle time, the gaps and the "
                "verdict below include time the GPU spent on their kernels.",
                100.0 * other / idle, other / 1e6, idle / 1e6);
  EXPECT_NE(std::find(a.notes.begin(), a.notes.end(), std::string(note)), a.notes.end()) << note;
}

TEST(Processes, AnalyzeWithoutPidRefusesSeveralRatherThanInterleave) {
  const Trace t = load_nsys_sqlite(trace_of("two_ranks"));
  const TraceJoin j(t);
  EXPECT_EQ(error_of([&] { analyze(j, {}); }),
            "the trace holds 2 processes with iterations, 4100 (python), 4200 (python): each is a loop of its own; "
            "name one with --pid N.");
  // The old reading, for the record: --range over both processes' ranges made one loop of 24
  // iterations whose start-to-next start is the 130 us offset, not either lap.
  ReportOptions o;
  o.range = "Forward Pass Iter *";
  o.pid = 4100;
  EXPECT_EQ(analyze(j, o).iterations.size(), 12u);
}

TEST(Processes, OneReportedTheOthersNoted) {
  const json& want = expected().at("one_without");
  const Trace t = load_nsys_sqlite(trace_of("one_without"));
  const TraceJoin j(t);
  const Analysis a = analyze(j, {});  // one process qualifies: reported as any single-process trace
  expect_matches_reference(a, want["processes"]["6100"], "6100");
  const std::set<std::string> notes(a.notes.begin(), a.notes.end());
  EXPECT_TRUE(
      notes.count("Process 6300 (loader) is not reported: its `batch *` ranges hold no GPU launches "
                  "(--pid 6300 to report it)."));
  EXPECT_TRUE(notes.count("Process 6200 (server) ran " +
                          std::to_string(want["gpu_work_without_iterations"]["6200"].get<int>()) +
                          " GPU operations but has no iteration ranges: its work is not in this report."));
}

TEST(Processes, PidNamesOneOrSaysWhichHaveIterations) {
  const Trace t = load_nsys_sqlite(trace_of("one_without"));
  const TraceJoin j(t);
  auto error = [&](uint32_t pid) {
    ReportOptions o;
    o.pid = pid;
    return error_of([&] { analyze(j, o); });
  };
  EXPECT_EQ(error(999),
            "the trace holds no process 999; the processes with iterations are 6100 (trainer), 6300 (loader).");
  EXPECT_EQ(error(6200),
            "process 6200 (server) has no NVTX range that marks the iterations: no `forward` range and no family of "
            "ranges numbered by iteration (like `Forward Pass Iter 3`) on one of its threads; the processes with "
            "iterations are 6100 (trainer), 6300 (loader).");
  EXPECT_EQ(error(6300), "");  // no GPU work in its ranges, but asked for by name: reported
  ReportOptions o;
  o.pid = 6100;
  o.range = "decoder";  // --range within the one process
  EXPECT_EQ(analyze(j, o).iterations.size(), 10u);
  o.range = "nothing";
  EXPECT_EQ(error_of([&] { analyze(j, o); })
                .rfind("process 6100 (trainer) has no NVTX range matching `nothing`; the "
                       "trace's most frequent ranges are ",
                       0),
            0u);
}

// The command: a note, one section per process; JSON with each process's report under "processes".
TEST(Processes, AnalyzeCommandReportsEachProcessOnItsOwn) {
  AnalyzeOptions o;
  o.file = trace_of("two_programs");
  o.json = temp("two.json");
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string note =
      "2 processes with iterations: 5100 (laptime), 5200 (python); each reported on its own; "
      "--pid N for one.";
  EXPECT_NE(out.find("  note\n    2 processes with iterations: 5100 (laptime), 5200 (python); each reported on its "
                     "own; --pid N\n    for one.\n"),
            std::string::npos)
      << out;
  const size_t first = out.find("=== process 5100 (laptime): 1 of 2 ===");
  const size_t second = out.find("=== process 5200 (python): 2 of 2 ===");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_LT(first, second);
  // laptime's synchronizes at every iteration's end, the PyTorch loop does not: each section its own.
  EXPECT_NE(out.substr(first, second - first).find("stream synchronize"), std::string::npos);
  EXPECT_NE(out.substr(second).find("  none: no device/stream/event synchronize"), std::string::npos);

  const json doc = json::parse(read_file(o.json));
  EXPECT_EQ(doc["schema"], "laptime.analyze/1");
  EXPECT_EQ(doc["notes"], json::array({note}));
  EXPECT_FALSE(doc.contains("time_ms"));  // no top-level lap to mistake for either process's
  ASSERT_EQ(doc["processes"].size(), 2u);
  const json& want = expected()["two_programs"]["processes"];
  for (const json& p : doc["processes"]) {
    const std::string pid = std::to_string(p["pid"].get<uint32_t>());
    EXPECT_EQ(p["process"], want[pid]["name"]);
    expect_near(p["time_ms"]["lap"], want[pid]["lap_ms"], pid);
    EXPECT_EQ(p["iterations"].size(), want[pid]["iterations"].size());
    EXPECT_TRUE(p.contains("settling"));
  }

  // --pid: that process's report, the single-process shape with its pid and name.
  o.report.pid = 5200;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  const std::string one = testing::internal::GetCapturedStdout();
  EXPECT_NE(one.find("laptime analyze " + o.file + "\n  process     5200 (python) (--pid)\n  source "),
            std::string::npos)
      << one;
  EXPECT_EQ(one.find("=== process"), std::string::npos);
  const json single = json::parse(read_file(o.json));
  EXPECT_EQ(single["pid"], 5200);
  EXPECT_EQ(single["process"], "python");
  expect_near(single["time_ms"]["lap"], want["5200"]["lap_ms"], "5200");
  std::remove(o.json.c_str());
}

TEST(Processes, OutputsOfOneRunNeedOneProcess) {
  AnalyzeOptions o;
  o.file = trace_of("two_ranks");
  o.svg = temp("two.svg");
  EXPECT_EQ(error_of([&] { run_analyze(o); }),
            "--svg draws one process's iteration; the trace holds 2 processes with iterations (4100 (python), 4200 "
            "(python)): name one with --pid N.");
  o.report.pid = 4200;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  testing::internal::GetCapturedStdout();
  EXPECT_NE(read_file(o.svg).find("<svg"), std::string::npos);
  std::remove(o.svg.c_str());
  AnalyzeOptions l;
  l.file = trace_of("two_ranks");
  l.layers = fixture("nsys/gpt2_bf16.layers.json");
  EXPECT_EQ(error_of([&] { run_analyze(l); }),
            "--layers needs one run's layer costs; the trace holds 2 processes with iterations (4100 (python), 4200 "
            "(python)): name one with --pid N.");
}

TEST(Processes, MoreThanTheCommandReportsOneByOneNeedPid) {
  AnalyzeOptions o;
  o.file = trace_of("many");
  EXPECT_EQ(error_of([&] { run_analyze(o); }),
            "too many processes to report one by one; the trace holds 33 processes with iterations (8000 (worker0), "
            "8001 (worker1), 8002 (worker2), 8003 (worker3), 8004 (worker4), 8005 (worker5) and 27 more): name one "
            "with --pid N.");
  o.report.pid = 8032;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_analyze(o), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("  process     8032 (worker32) (--pid)\n"), std::string::npos);
}

TEST(Processes, FlagsParseAndExcludeEachOther) {
  {
    CLI::App app;
    AnalyzeOptions o;
    add_analyze_subcommand(app, o);
    app.parse(std::vector<std::string>{"4100", "--pid", "t.sqlite", "analyze"});
    EXPECT_EQ(o.report.pid, 4100u);
    EXPECT_THROW(app.parse(std::vector<std::string>{"x", "--pid", "t.sqlite", "analyze"}), CLI::ParseError);
    EXPECT_THROW(app.parse(std::vector<std::string>{"16777216", "--pid", "t.sqlite", "analyze"}), CLI::ParseError);
  }
  CLI::App app;
  DiffCommandOptions o;
  add_diff_subcommand(app, o);
  app.parse(std::vector<std::string>{"2", "--pid-after", "1", "--pid-before", "b", "a", "diff"});
  EXPECT_EQ(o.pid_before, 1u);
  EXPECT_EQ(o.pid_after, 2u);
  EXPECT_FALSE(o.pid.has_value());
  CLI::App app2;
  DiffCommandOptions o2;
  add_diff_subcommand(app2, o2);
  EXPECT_THROW(app2.parse(std::vector<std::string>{"2", "--pid-after", "1", "--pid", "b", "a", "diff"}),
               CLI::ParseError);
}

TEST(Processes, DiffRefusesSeveralOrComparesTheOnesNamed) {
  DiffCommandOptions o;
  o.before = o.after = trace_of("two_ranks");
  EXPECT_EQ(error_of([&] { run_diff(o); }),
            trace_of("two_ranks") +
                " holds 2 processes with iterations (4100 (python), 4200 (python)): a diff compares one process on "
                "each side; name it with --pid N (both sides) or --pid-before N / --pid-after N.");
  // Rank 1's kernels are 1.3x rank 0's: one capture's two ranks compared, side by side.
  DiffOptions d;
  DiffSide r0 = load_run(trace_of("two_ranks"), d, 4100), r1 = load_run(trace_of("two_ranks"), d, 4200);
  EXPECT_NE(r0.source.find(", process 4100 (python)"), std::string::npos) << r0.source;
  const json& want = expected()["two_ranks"]["processes"];
  EXPECT_EQ(r0.iteration_ns.size(), want["4100"]["steady"].get<size_t>());
  EXPECT_EQ(r1.iteration_ns.size(), want["4200"]["steady"].get<size_t>());
  const Diff diff = diff_runs(std::move(r0), std::move(r1), d);
  EXPECT_EQ(diff.rows.front().label, Label::Slower);
  expect_near(diff.rows.front().before_ns, want["4100"]["gpu_ms_median"].get<double>() * 1e6, "before median");
  expect_near(diff.rows.front().after_ns, want["4200"]["gpu_ms_median"].get<double>() * 1e6, "after median");

  o.pid_before = 4100;
  o.pid_after = 4100;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_diff(o), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("Verdict: the iteration is SAME"), std::string::npos);
  // A bench report is one process's laps: no process of it to name.
  EXPECT_EQ(error_of([&] { load_run(fixture("diff_bench_base.json"), d, 4100); }),
            fixture("diff_bench_base.json") +
                " is a bench report, one process's laps: --pid names a process of a trace "
                "(--pid-before N or --pid-after N for the trace's side alone).");
}

}  // namespace
}  // namespace laptime::trace
