// The steady state chosen right (warm-up from the data, the lap's source), on every committed capture of a
// graph, a compiled loop or several processes: the headline lap is within 1% of the GPU's start
// to next start over the steady iterations (computed here from the iterations' own GPU starts),
// the verdict is GPU-bound wherever the GPU is busy over 90% of that lap, and no iteration that
// the data shows unsettled is measured. The torch.compile(mode="reduce-overhead") captures are
// checked against tests/fixtures/compiled/reference.py's figures, computed with definitions of
// their own (the last half of the loop; the iterations that record graphs).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/processes.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {
namespace {

using nlohmann::json;
using testing_support::fixture;
using testing_support::read_file;

// Every process's report, as `laptime analyze` makes them.
std::vector<Analysis> reports(const TraceJoin& j) {
  std::vector<Analysis> out;
  const ProcessChoice c = choose_processes(j, "", std::nullopt);
  if (c.reported.empty()) out.push_back(analyze(j, {}));
  for (const ProcessIterations& p : c.reported) out.push_back(analyze(j, {}, p.set));
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
    const IterationSteadyState s = iteration_steady_state(a);
    EXPECT_LE(s.steady.start, s.warmup) << s.text;
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
    EXPECT_NE(a.warmup_rule.find("settles"), std::string::npos) << a.warmup_rule;
    const double lap = want["gpu_lap_ms"].get<double>();
    EXPECT_NEAR(a.lap_ms, lap, 0.01 * lap) << a.lap_source;
    if (want["gpu_bound"].get<bool>()) {
      EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
    }
  }
}

}  // namespace
}  // namespace laptime::trace
