// `laptime analyze` on the lesson's own loop: PyTorch captures of tests/fixtures/lesson/
// lesson_loop.py (nsys 2025.3 on an H200; capture.sh re-takes them), analyzed with no flags,
// as a learner would, and checked against the `nsys stats` CSVs captured beside them.
//
//   gpt2_clean, resnet50_clean   the loop as the lesson writes it, nothing planted
//   gpt2_max, resnet50_max       Python max() over a 4-element slice of the logits in the loop
//   gpt2_tensorlist              torch.tensor(list).cuda() in the loop
//   gpt2_threads_startend        start/end iteration ranges, plus a loader thread with its own
//                                numbered ranges (`load batch N`)
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "support/nsys_csv.h"
#include "trace/analyses/iterations.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/analyze.h"

namespace laptime::trace {
namespace {

std::string lesson(const std::string& name) {
  const char* env = std::getenv("LAPTIME_SOURCE_DIR");
  return std::string(env && *env ? env : LAPTIME_SOURCE_DIR) + "/tests/fixtures/lesson/" + name;
}

const Trace& trace_of(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Trace>> traces;  // TraceJoin and Analysis refer to it
  auto& t = traces[name];
  if (!t) t = std::make_unique<Trace>(load_nsys_sqlite(lesson(name + ".sqlite")));
  return *t;
}

Analysis analyze_lesson(const std::string& name) {
  const TraceJoin j(trace_of(name));
  return analyze(j, {});  // no flags, as the lesson's learner runs it
}

// nvtx_sum: each `Forward Pass Iter N` range's time (one instance each), by N.
std::map<uint64_t, double> iteration_times(const std::string& name) {
  std::map<uint64_t, double> out;
  const std::string prefix = ":Forward Pass Iter ";
  for (const auto& row : nsys_csv::table(lesson(name + "_nvtx_sum.csv"))) {
    const std::string& range = row.at("Range");
    if (range.rfind(prefix, 0) != 0) continue;
    EXPECT_EQ(row.at("Instances"), "1") << range;
    out[std::stoull(range.substr(prefix.size()))] = std::stod(row.at("Avg (ns)"));
  }
  return out;
}

// cuda_api_sum: calls per API name.
std::map<std::string, size_t> api_calls(const std::string& name) {
  std::map<std::string, size_t> out;
  for (const auto& row : nsys_csv::table(lesson(name + "_cuda_api_sum.csv")))
    out[normalize_api_name(row.at("Name"))] += std::stoul(row.at("Num Calls"));
  return out;
}

class Lesson : public testing::TestWithParam<std::string> {};

TEST_P(Lesson, ShrunkExportStillAgreesWithNsysStats) {
  // shrink_capture.py dropped tables; what the analyzer reads must be what nsys summed.
  const Trace& t = trace_of(GetParam());
  std::map<std::string, size_t> calls;
  for (const ApiCall& c : t.api_calls) ++calls[c.name];
  EXPECT_EQ(calls, api_calls(GetParam()));
  std::map<std::string, std::pair<size_t, Ns>> ranges, nsys;
  for (const NvtxEvent& r : t.nvtx) {
    auto& [n, time] = ranges[r.domain + ":" + r.text];
    ++n;
    time += r.end - r.start;
  }
  for (const auto& row : nsys_csv::table(lesson(GetParam() + "_nvtx_sum.csv")))
    nsys[row.at("Range")] = {std::stoul(row.at("Instances")), std::stoll(row.at("Total Time (ns)"))};
  EXPECT_EQ(ranges, nsys);
}

TEST_P(Lesson, FindsTheIterationsWithNoFlags) {
  const Analysis a = analyze_lesson(GetParam());
  const std::map<uint64_t, double> nsys = iteration_times(GetParam());
  EXPECT_EQ(a.range_name, "Forward Pass Iter *");
  EXPECT_NE(a.range_rule.find("ranges named alike but for a number"), std::string::npos) << a.range_rule;
  ASSERT_EQ(a.iterations.size(), nsys.size());
  size_t k = 0;
  for (const auto& [number, time] : nsys) {  // in the order of their numbers, each its own range
    EXPECT_EQ(a.iterations[k].index, number);
    EXPECT_EQ(a.iterations[k].duration(), static_cast<Ns>(time));
    ++k;
  }
  EXPECT_TRUE(a.iterations[0].warmup);  // unmarked: the first is warm-up
  EXPECT_GE(a.steady_count, 2u);
}

TEST_P(Lesson, SteadyStateTimeIsNsysOnTheSameIterations) {
  const Analysis a = analyze_lesson(GetParam());
  const std::map<uint64_t, double> nsys = iteration_times(GetParam());
  double sum = 0;
  size_t n = 0;
  for (const Iteration& it : a.iterations)
    if (it.steady()) {
      sum += nsys.at(it.index);
      ++n;
    }
  ASSERT_EQ(n, a.steady_count);
  const double nsys_ms = sum / n / 1e6;
  EXPECT_NEAR(a.host_ms.mean, nsys_ms, 0.01 * nsys_ms);
  EXPECT_FALSE(a.lap_from_gpu);  // the lesson's loops reach a steady state in 10 iterations
  EXPECT_DOUBLE_EQ(a.lap_ms, a.host_ms.mean);
  // Steady means the host range is the lap: each one within 3% of the GPU's start to next start.
  for (const Iteration& it : a.iterations)
    if (it.steady() && GetParam().rfind("gpt2", 0) == 0) {
      EXPECT_NEAR(it.duration() / 1e6, a.period_ms.median, 0.03 * a.period_ms.median) << "iteration " << it.index;
    }
}

INSTANTIATE_TEST_SUITE_P(Captures, Lesson,
                         testing::Values("gpt2_clean", "gpt2_max", "gpt2_tensorlist", "gpt2_threads_startend",
                                         "resnet50_clean", "resnet50_max"));

TEST(LessonCaptures, HostAheadIterationsAreLeftOutAndSaid) {
  // Without a synchronization the host enqueues iterations faster than the GPU runs them
  // until the launch queue is full: those ranges are far shorter than the lap.
  const Analysis a = analyze_lesson("gpt2_clean");
  size_t ahead = 0;
  for (const Iteration& it : a.iterations) {
    if (!it.host_ahead) continue;
    ++ahead;
    EXPECT_LT(it.duration() / 1e6, 0.9 * a.period_ms.median) << "iteration " << it.index;
  }
  EXPECT_GE(ahead, 1u);
  EXPECT_EQ(ahead + a.steady_count + 1, a.iterations.size());
  EXPECT_NE(a.steady_rule.find("the host ran ahead of the GPU"), std::string::npos) << a.steady_rule;
  // Once the host is held back, it never runs ahead again: the ahead ones come first.
  bool seen_steady = false;
  for (const Iteration& it : a.iterations) {
    if (it.steady()) seen_steady = true;
    EXPECT_FALSE(seen_steady && it.host_ahead) << "iteration " << it.index;
  }
}

TEST(LessonCaptures, CleanLoopsDoNotSynchronize) {
  for (const char* name : {"gpt2_clean", "resnet50_clean", "gpt2_threads_startend"}) {
    const Analysis a = analyze_lesson(name);
    EXPECT_TRUE(a.has_api_trace) << name;
    EXPECT_TRUE(a.syncs.empty()) << name << ": " << (a.syncs.empty() ? "" : a.syncs[0].api.str());
    EXPECT_NE(a.verdict.find("No synchronization"), std::string::npos) << name << ": " << a.verdict;
    // The setup's copies and synchronizations are all there, outside the loop.
    const size_t nsys_syncs = api_calls(name)["cudaStreamSynchronize"];
    EXPECT_GT(nsys_syncs, 0u);
    EXPECT_EQ(std::count_if(a.syncs_elsewhere.begin(), a.syncs_elsewhere.end(),
                            [](const SyncCall& s) { return s.api == "cudaStreamSynchronize"; }),
              static_cast<long>(nsys_syncs))
        << name;
  }
}

// The pitfall loop runs the clean loop's setup and adds its calls in each of the 10 iterations:
// per iteration, (pitfall calls - clean calls) / 10 by nsys's own count.
struct Pitfall {
  const char* name;
  const char* clean;
  const char* api;
};

TEST(LessonCaptures, SyncCountPerIterationIsExact) {
  for (const Pitfall& p : {Pitfall{"gpt2_max", "gpt2_clean", "cudaStreamSynchronize"},
                           Pitfall{"resnet50_max", "resnet50_clean", "cudaStreamSynchronize"},
                           Pitfall{"gpt2_tensorlist", "gpt2_clean", "cudaStreamSynchronize"},
                           Pitfall{"gpt2_tensorlist", "gpt2_clean", "cudaMemcpyAsync"}}) {
    const Analysis a = analyze_lesson(p.name);
    const size_t iterations = a.iterations.size(), total = api_calls(p.name)[p.api];
    const size_t added = total - api_calls(p.clean)[p.api];
    ASSERT_EQ(added % iterations, 0u) << p.name << " " << p.api;
    const size_t per_iteration = added / iterations;
    EXPECT_GE(per_iteration, 1u) << p.name << " " << p.api;
    std::map<int64_t, size_t> counted;
    for (const SyncCall& s : a.syncs)
      if (s.api == p.api) ++counted[s.iteration];
    for (const Iteration& it : a.iterations)
      if (it.steady()) {
        EXPECT_EQ(counted[static_cast<int64_t>(it.index)], per_iteration)
            << p.name << " " << p.api << " iteration " << it.index;
      }
    // Every call of that API is accounted for once, in the loop or outside it.
    size_t all = 0;
    for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
      all += std::count_if(list->begin(), list->end(), [&](const SyncCall& s) { return s.api == p.api; });
    EXPECT_EQ(all, total) << p.name << " " << p.api;
  }
}

TEST(LessonCaptures, MaxOnATensorStallsTheHostAndTheCostMatchesTheCleanRun) {
  const Analysis a = analyze_lesson("gpt2_max"), clean = analyze_lesson("gpt2_clean");
  // Per iteration one synchronize waits for the forward pass: the compute stream had most of
  // an iteration queued when it was called, and it returned only when that work was done.
  std::map<int64_t, size_t> long_stalls;
  for (const SyncCall& s : a.syncs)
    if (s.effect == SyncEffect::Stall && s.pending > 0.5 * a.lap_ms * 1e6) {
      ++long_stalls[s.iteration];
    }
  for (const Iteration& it : a.iterations)
    if (it.steady()) {
      EXPECT_EQ(long_stalls[static_cast<int64_t>(it.index)], 1u) << "iteration " << it.index;
    }
  EXPECT_GT(a.sync_stall, 0);
  EXPECT_NE(a.verdict.find("for the compute stream's work to finish"), std::string::npos) << a.verdict;
  // The estimate of the lap without the syncs against the clean loop's measured lap: the
  // difference it predicts within 20% of the difference the two captures show.
  const double predicted = a.lap_ms - a.lap_without_syncs_ms, measured = a.lap_ms - clean.lap_ms;
  ASSERT_GT(measured, 0);
  EXPECT_NEAR(predicted, measured, 0.2 * measured) << a.verdict;
}

TEST(LessonCaptures, PageableTensorFromAListIsFoundAndDoesNotReadStale) {
  const Analysis a = analyze_lesson("gpt2_tensorlist");
  size_t pageable = 0;
  for (const SyncCall& s : a.syncs)
    if (s.kind == SyncKind::PageableCopy) {
      ++pageable;
      EXPECT_EQ(s.detail, "HtoD 12 B, pageable -> device");  // torch.tensor([1.0, 0.5, 0.25]): 3 floats
      EXPECT_NE(s.effect, SyncEffect::ReturnedAtOnce);       // a host-to-device copy reads nothing back
    }
  EXPECT_EQ(pageable, a.steady_count);
  EXPECT_EQ(a.verdict.find("can be stale"), std::string::npos) << a.verdict;
}

TEST(LessonCaptures, StartEndRangesAndALoaderThreadWithItsOwnFamily) {
  const Trace& t = trace_of("gpt2_threads_startend");
  const TraceJoin j(t);
  const std::vector<RangeFamily> families = numbered_families(j);
  ASSERT_GE(families.size(), 2u);
  EXPECT_EQ(families[0].glob, "Forward Pass Iter *");
  const auto loader =
      std::find_if(families.begin(), families.end(), [](const RangeFamily& f) { return f.glob == "load batch *"; });
  ASSERT_NE(loader, families.end());
  EXPECT_NE(loader->tid, families[0].tid);  // its own thread
  EXPECT_EQ(loader->gpu_launches, 0u);      // CPU work only
  const Analysis a = analyze(j, {});
  for (const Iteration& it : a.iterations) EXPECT_EQ(t.nvtx[it.nvtx].kind, NvtxKind::StartEnd);
  // The layer ranges (push/pop) still nest inside the start/end iterations: GPU work is tied to them.
  EXPECT_FALSE(a.range_patterns.empty());
  EXPECT_EQ(a.range_patterns.front().range.rfind("Layer *", 0), 0u) << a.range_patterns.front().range;
}

TEST(LessonCaptures, AGlobOrARegexGivesTheSameIterations) {
  const Analysis base = analyze_lesson("gpt2_max");
  const TraceJoin j(trace_of("gpt2_max"));
  for (const char* spec : {"Forward Pass Iter *", "re:Forward Pass Iter \\d+", "Forward?Pass?Iter ?"}) {
    ReportOptions o;
    o.range = spec;
    const Analysis a = analyze(j, o);
    ASSERT_EQ(a.iterations.size(), base.iterations.size()) << spec;
    for (size_t i = 0; i < a.iterations.size(); ++i) EXPECT_EQ(a.iterations[i].nvtx, base.iterations[i].nvtx) << spec;
    EXPECT_EQ(a.syncs.size(), base.syncs.size()) << spec;
  }
  ReportOptions exact;
  exact.range = "Forward Pass Iter 3";  // one range: measured with a note, not an error
  EXPECT_EQ(analyze(j, exact).iterations.size(), 1u);
}

}  // namespace
}  // namespace laptime::trace
