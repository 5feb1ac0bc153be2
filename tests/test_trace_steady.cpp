// The steady state chosen right (warm-up from the data, the lap's source), on every committed capture of a
// graph, a compiled loop or several processes: the headline lap is within 1% of the GPU's start
// to next start over the steady iterations (computed here from the iterations' own GPU starts),
// the verdict is GPU-bound wherever the GPU is busy over 90% of that lap, and no iteration that
// the data shows unsettled is measured. The torch.compile(mode="reduce-overhead") captures are
// checked against tests/fixtures/compiled/reference.py's figures, computed with definitions of
// their own (the last half of the loop; the iterations that record graphs).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/per_process.h"
#include "trace/analyses/processes.h"
#include "trace/model/format.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::fixture;
using testing_support::read_file;

// Every process's report, as `laptime analyze` makes them.
std::vector<Analysis> reports(const TraceJoin& j, const std::string& range = "") {
  std::vector<Analysis> out;
  ReportOptions o;
  o.range = range;
  const ProcessChoice c = choose_processes(j, range, std::nullopt);
  if (c.reported.empty()) out.push_back(analyze(j, o));
  for (const ProcessIterations& p : c.reported) out.push_back(analyze(j, o, p.set));
  return out;
}

// Mean GPU start to next start over consecutive steady iterations, ms; 0 when there is no pair.
double gpu_lap_ms(const Analysis& a) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 1; i < a.iterations.size(); ++i) {
    const Iteration &p = a.iterations[i - 1], &it = a.iterations[i];
    if (!p.steady() || !it.steady() || !p.has_gpu || !it.has_gpu) continue;
    sum += double(it.gpu_start - p.gpu_start);
    ++n;
  }
  return n ? sum / n / 1e6 : 0;
}

std::vector<std::string> captures() {
  std::vector<std::string> out;
  for (const char* folder : {"graph", "compiled"})
    for (const auto& e : std::filesystem::directory_iterator(fixture(folder)))
      if (e.path().extension() == ".sqlite") out.push_back(std::string(folder) + "/" + e.path().filename().string());
  out.push_back("nsys/two_gpt2.sqlite");
  for (const char* name : {"late_start", "one_without", "two_programs", "two_ranks", "two_threads"})
    out.push_back(std::string("process_") + name + ".sqlite");
  return out;
}

class Steady : public testing::TestWithParam<std::string> {};

TEST_P(Steady, TheHeadlineIsTheLoopsLap) {
  const Trace t = load_nsys_sqlite(fixture(GetParam()));
  const TraceJoin j(t);
  for (const Analysis& a : reports(j)) {
    SCOPED_TRACE(a.range_name + ", " + a.lap_source);
    const double gpu = gpu_lap_ms(a);
    ASSERT_GT(gpu, 0) << "no two steady iterations in a row with GPU work";
    const bool interleaved = a.lap_reason.empty() && !a.lap_from_gpu &&
                             std::any_of(a.notes.begin(), a.notes.end(), [](const std::string& n) {
                               return n.find("threads at once") != std::string::npos;
                             });
    if (!interleaved) {  // two threads' loops read as one have no lap of their own
      EXPECT_NEAR(a.lap_ms, gpu, 0.01 * gpu);
    }
    if (a.busy_ms.mean > 0.9 * gpu) {
      EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
    }
    // Nothing the data shows unsettled is measured, unless --skip-warmup said so.
    const IterationSettling s = iteration_settling(a);
    EXPECT_LE(s.settling.start, s.warmup) << s.text;
    EXPECT_TRUE(s.warning.empty()) << s.warning;
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, Steady, testing::ValuesIn(captures()), [](const auto& info) {
  std::string name = info.param.substr(0, info.param.size() - 7);
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
});

// The torch.compile(mode="reduce-overhead") loop: the iterations that record the graphs are
// warm-up (nothing marks them: the data does), the lap is the steady one, the verdict GPU-bound.
TEST(Compiled, AgreesWithTheIndependentReference) {
  const json e = json::parse(read_file(fixture("compiled/reference.expected.json")));
  if (e.empty())
    GTEST_SKIP() << "no torch.compile capture committed yet: run `scripts/dev/captures.sh compiled` on a GPU "
                    "machine and copy its fixtures/ into tests/fixtures/compiled/";
  for (const auto& [name, want] : e.items()) {
    SCOPED_TRACE(name);
    const Trace t = load_nsys_sqlite(fixture("compiled/" + name + ".sqlite"));
    const TraceJoin j(t);
    const Analysis a = analyze(j, {});
    ASSERT_EQ(a.iterations.size(), want["iterations"].get<size_t>());
    EXPECT_FALSE(want["recording"].empty()) << "the capture records no graph inside the loop";
    for (const auto& i : want["recording"]) EXPECT_TRUE(a.iterations[i.get<size_t>()].warmup) << "iteration " << i;
    EXPECT_NE(a.warmup_rule.find("initial transient ends"), std::string::npos) << a.warmup_rule;
    const double lap = want["gpu_lap_ms"].get<double>();
    EXPECT_NEAR(a.lap_ms, lap, 0.01 * lap) << a.lap_source;
    if (want["gpu_bound"].get<bool>()) {
      EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
    }
  }
}

// --- Warm-up is the initial transient only ----------------------------------------------------

// A loop of `forward` ranges on one thread, one kernel each of series[i] ms, launched 1 us into a
// range that lasts 20 us longer than it: the host never runs ahead, the GPU span is the kernel.
Trace loop_of(const std::vector<double>& series_ms) {
  Trace t;
  Ns at = 1'000'000;
  const Name forward = t.intern("forward"), launch = t.intern("cudaLaunchKernel"), gemm = t.intern("gemm");
  for (size_t i = 0; i < series_ms.size(); ++i) {
    const Ns kernel = static_cast<Ns>(series_ms[i] * 1e6);
    const NvtxEvent r = testing_support::numbered_range(forward, i, 7, at, at + kernel + 20'000);
    t.nvtx.push_back(r);
    ApiCall c;
    c.name = launch;
    c.pid = c.tid = 7;
    c.start = at + 1'000;
    c.end = at + 3'000;
    c.correlation = static_cast<uint32_t>(i + 1);
    t.api_calls.push_back(c);
    Kernel k;
    k.name = k.short_name = gemm;
    k.pid = 7;
    k.stream = 7;
    k.start = at + 5'000;
    k.end = k.start + kernel;
    k.correlation = c.correlation;
    t.kernels.push_back(k);
    at = r.end + 10'000;
  }
  t.finalize();
  return t;
}

struct SyntheticRun {
  std::string name;
  std::vector<double> series_ms;
  size_t warmup;                 // what analyze drops
  std::vector<uint64_t> shifts;  // the iterations where a level shift starts
};

std::vector<SyntheticRun> synthetic_runs() {
  std::vector<SyntheticRun> runs;
  // A transient: slow, decaying for 5 iterations, then 30 at 2 ms.
  SyntheticRun transient{"transient", {9, 6, 4, 3, 2.5}, 5, {}};
  for (int i = 0; i < 30; ++i) transient.series_ms.push_back(2 + 0.004 * (i * 7 % 5 - 2));
  runs.push_back(transient);
  // The noisy run that lost 21 iterations: settles after 6, a dip and blocks later.
  SyntheticRun blocks{"blocks", {253, 10, 7.8, 7.6, 7.7, 48.7}, 6, {18, 24, 30}};
  for (double level : {58.6, 58.9, 53.8, 55.1, 58.2, 57.9})
    for (double w : {0.1, -0.1, 0.05, -0.05, 0.0, 0.08}) blocks.series_ms.push_back(level + w);
  runs.push_back(blocks);
  // A power-cap step at iteration 40 of 100, after a slow first iteration.
  SyntheticRun cap{"power_cap", {}, 1, {40}};
  for (int i = 0; i < 100; ++i) cap.series_ms.push_back((i < 40 ? 3.71 : 4.0) + 0.004 * (i * 7 % 5 - 2));
  cap.series_ms[0] = 30;
  runs.push_back(cap);
  return runs;
}

TEST(WarmupIsTheTransient, OnSyntheticRuns) {
  for (const SyntheticRun& run : synthetic_runs()) {
    SCOPED_TRACE(run.name);
    const Trace t = loop_of(run.series_ms);
    const TraceJoin j(t);
    const ProcessReports reports = analyze_per_process(j, {});  // as `laptime analyze` reports it
    ASSERT_EQ(reports.each.size(), 1u);
    const Analysis& a = reports.each.front().a;
    const IterationSettling& s = reports.each.front().settling;
    EXPECT_EQ(s.warmup, run.warmup) << a.warmup_rule;
    EXPECT_EQ(a.steady_count, run.series_ms.size() - run.warmup) << a.steady_rule;
    ASSERT_EQ(s.settling.shifts.size(), run.shifts.size()) << s.text;
    std::string note;
    for (const std::string& n : a.notes)
      if (n.find("shifts level") != std::string::npos) note = n;
    for (size_t i = 0; i < run.shifts.size(); ++i) {
      EXPECT_EQ(a.iterations[s.settling.shifts[i].at].index, run.shifts[i]);
      // The note names where each shift starts and the levels on both sides.
      EXPECT_NE(note.find(detail::format("at iteration %llu, %.3f -> %.3f ms", (unsigned long long)run.shifts[i],
                                         s.settling.shifts[i].before / 1e6, s.settling.shifts[i].after / 1e6)),
                std::string::npos)
          << note;
      EXPECT_NE(s.text.find(detail::format("shifts at iteration %llu", (unsigned long long)run.shifts[i])),
                std::string::npos)
          << s.text;
    }
    if (run.shifts.empty()) {
      EXPECT_TRUE(note.empty()) << note;
    }
  }
}

// The rule before this one, written out here: the band from the last half (median ± max(5 x
// 1.4826 MAD, 2%)), steady after the last iteration of the first half outside it.
size_t old_rule_start(const std::vector<double>& x) {
  const size_t n = x.size();
  if (n == 0) return 0;
  const std::vector<double> last(x.begin() + static_cast<std::ptrdiff_t>(n / 2), x.end());
  const double m = stats::median(last), band = std::max(5 * 1.4826 * stats::mad(last), 0.02 * std::fabs(m));
  size_t start = 0;
  for (size_t i = 0; i < n / 2; ++i)
    if (std::fabs(x[i] - m) > band) start = i + 1;
  return start;
}

// Every committed trace with the range its loop is: nsys exports and laptime's captures (found by
// laptime's rules), and the PyTorch profiler's traces (their reference's range).
std::vector<std::pair<std::string, std::string>> every_fixture_trace() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(fixture("")))
    if (e.path().extension() == ".sqlite") out.emplace_back(e.path().lexically_relative(fixture("")).string(), "");
  for (auto& kineto : testing_support::kineto_fixtures()) out.push_back(std::move(kineto));
  std::sort(out.begin(), out.end());
  return out;
}

// On every committed trace, every process: the transient never ends later than the old rule put
// the warm-up's end, so no report measures fewer iterations than it did.
TEST(WarmupIsTheTransient, NoCommittedTraceLosesASteadyIteration) {
  size_t checked = 0;
  std::set<std::string> kineto;  // the PyTorch profiler's traces analyzed (one has no GPU work in its step)
  for (const auto& [name, range] : every_fixture_trace()) {
    SCOPED_TRACE(name);
    std::optional<Trace> t;
    try {
      t.emplace(load_trace(fixture(name)));
    } catch (const TraceError&) {
      continue;  // the damaged and foreign ones
    }
    const TraceJoin j(*t);
    std::vector<Analysis> each;
    try {
      each = reports(j, range);
    } catch (const TraceError&) {
      continue;  // no iterations to find
    }
    if (t->format == TraceFormat::Kineto) kineto.insert(name);
    for (const Analysis& a : each) {
      std::vector<double> series;
      std::vector<size_t> position;
      for (size_t i = 0; i < a.iterations.size(); ++i)
        if (a.iterations[i].has_gpu) {
          series.push_back(double(a.iterations[i].gpu_span()));
          position.push_back(i);
        }
      if (series.empty()) continue;
      const size_t old = old_rule_start(series);
      const IterationSettling s = iteration_settling(a);
      EXPECT_LE(s.settling.start, old < position.size() ? position[old] : a.iterations.size()) << s.text;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50u);
  EXPECT_EQ(kineto.size(), testing_support::kineto_fixtures().size());
}

}  // namespace
}  // namespace laptime::trace
