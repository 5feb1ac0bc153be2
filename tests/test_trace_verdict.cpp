// The verdict's heading follows the largest measured cause (docs/PROFILING.md §8.9), and says
// where the synchronizations sit, folded by block index. Checked against
// tests/fixtures/verdict_reference.py, which computes the idle time's split, the heading and the
// places from each trace's SQLite tables on its own (verdict_reference.expected.json): the three
// traces make_verdict_traces.py writes (sync-bound, launch-bound with syncs, GPU-bound with syncs),
// laptime's own `--pitfall sync` and allocation captures, and the lesson's PyTorch loops.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/trace_testing.h"
#include "trace/json_report.h"
#include "trace/nsys_sqlite.h"
#include "trace/report.h"

namespace laptime::trace {
namespace {

using testing_support::fixture;
using testing_support::read_file;

nlohmann::json reference() { return nlohmann::json::parse(read_file(fixture("verdict_reference.expected.json"))); }

Analysis analyze_file(const std::string& name) {
  const Trace t = load_nsys_sqlite(fixture(name));
  const TraceJoin j(t);
  return analyze(j, {});
}

// The quantities the rule weighs, from the Analysis's own fields (analysis.h).
struct Split {
  Ns period = 0, busy = 0, input = 0, host_wait = 0;
};
Split split_of(const Analysis& a) {
  Split s;
  for (const Iteration& it : a.iterations)
    if (it.steady() && it.has_gpu) {
      s.period += it.gpu_span();
      s.busy += it.busy;
    }
  s.period += a.between_iterations;
  s.input = a.input_wait + a.htod_time;
  s.host_wait = a.host_wait_idle + a.between_iterations - a.input_wait;
  return s;
}

class Verdict : public testing::TestWithParam<std::string> {};

TEST_P(Verdict, MatchesTheReference) {
  const nlohmann::json all = reference();
  if (!all.contains(GetParam())) GTEST_SKIP() << GetParam() << " is not committed (or not in the reference yet)";
  const nlohmann::json& want = all.at(GetParam());
  const Analysis a = analyze_file(GetParam());
  ASSERT_EQ(a.steady_count, want.at("steady").get<size_t>());
  const Split s = split_of(a);
  EXPECT_EQ(s.period, want.at("period_ns").get<Ns>());
  EXPECT_EQ(s.busy, want.at("busy_ns").get<Ns>());
  EXPECT_EQ(s.input, want.at("input_ns").get<Ns>());
  EXPECT_EQ(s.host_wait, want.at("host_wait_ns").get<Ns>());
  EXPECT_EQ(a.sync_idle, want.at("sync_idle_ns").get<Ns>());
  EXPECT_EQ(a.syncs.size(), want.at("syncs").get<size_t>());
  size_t stalls = 0;
  for (const SyncCall& c : a.syncs) stalls += c.effect == SyncEffect::Stall;
  EXPECT_EQ(stalls, want.at("stalls").get<size_t>());
  EXPECT_EQ(std::string(bound_name(a.bound)), want.at("bound").get<std::string>()) << a.verdict;
  EXPECT_EQ(to_json(a)["verdict"]["bound"], want.at("bound"));
  std::vector<std::pair<std::string, size_t>> places;
  for (const SyncPlace& p : a.sync_places) places.emplace_back(p.name, p.count);
  EXPECT_EQ(places, (want.at("places").get<std::vector<std::pair<std::string, size_t>>>()));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Verdict,
                         testing::Values("verdict_sync.sqlite", "verdict_launch_syncs.sqlite",
                                         "verdict_gpu_syncs.sqlite", "nsys/pitfall_sync_blocking.sqlite",
                                         "nsys/pitfall_sync_blocking_default_stream.sqlite",
                                         "nsys/pitfall_sync_per_layer.sqlite", "nsys/pitfall_alloc.sqlite",
                                         "nsys/bench_gpt2_clean.sqlite", "nsys/sync_gpt2.sqlite",
                                         "nsys/sync_resnet50.sqlite", "lesson/resnet50_max.sqlite",
                                         "lesson/gpt2_max.sqlite", "lesson/gpt2_tensorlist.sqlite"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param.substr(p.param.find('/') + 1);
                           n = n.substr(0, n.find('.'));
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// What a user reads: the heading, and the syncs at every layer's end named by their folded
// layers with a count each, not the first block's first range.
TEST(Verdict, PitfallSyncIsSyncBoundAndSaysWhere) {
  for (const char* name : {"verdict_sync.sqlite", "nsys/pitfall_sync_blocking.sqlite"}) {
    const Analysis a = analyze_file(name);
    EXPECT_EQ(a.bound, Bound::SyncBound) << name;
    const std::string text = testing_support::report_text(a);
    EXPECT_NE(text.find("\nVerdict: sync-bound\n  Sync-bound: the GPU is busy "), std::string::npos) << text;
    EXPECT_NE(a.verdict.find(" of the idle time follows a synchronization that stalled it"), std::string::npos)
        << a.verdict;
    EXPECT_NE(a.verdict.find("per iteration (in h.*.ln_1: 12 per iteration, h.*.attn.c_attn: 12, h.*.attn.core: "
                             "12, h.*.attn.c_proj: 12, and 8 more places)."),
              std::string::npos)
        << name << ": " << a.verdict;
    // The table's column too: folded, in the order the layers run.
    EXPECT_NE(text.find("  h.*.ln_1, h.*.attn.c_attn, h.*.attn.core\n"), std::string::npos) << text;
  }
}

// Syncs present, launches dominant: the heading stays launch-bound and names the syncs' share.
TEST(Verdict, LaunchGapsOutweighAFewSyncs) {
  const Analysis a = analyze_file("verdict_launch_syncs.sqlite");
  EXPECT_EQ(a.bound, Bound::LaunchBound) << a.verdict;
  EXPECT_GT(a.sync_idle, 0);
  EXPECT_NE(a.verdict.find("% after a synchronization that stalled it."), std::string::npos) << a.verdict;
  EXPECT_NE(a.verdict.find("2 cudaStreamSynchronize per iteration (in h.5.mlp: 1 per iteration, lm_head: 1)."),
            std::string::npos)
      << a.verdict;
}

// A busy GPU stays GPU-bound whatever the syncs cost the host.
TEST(Verdict, AGpuBoundLoopWithAFewSyncs) {
  const Analysis a = analyze_file("verdict_gpu_syncs.sqlite");
  EXPECT_EQ(a.bound, Bound::GpuBound) << a.verdict;
  EXPECT_NE(a.verdict.find("(in h.11.mlp: 1 per iteration, lm_head: 1)."), std::string::npos) << a.verdict;
}

// A place that holds one range keeps its name; calls that do not happen in every iteration are
// counted in all (the synthetic trace's copy in iteration 1 and sync in iteration 2).
TEST(Verdict, OnePlaceKeepsItsNameAndRareCallsAreCountedInAll) {
  const Analysis a = analyze_file("synthetic_trace.sqlite");
  EXPECT_NE(a.verdict.find("1 cudaMemcpyAsync in iteration 1, 1 cudaStreamSynchronize in iteration 2 (in wte: 1 "
                           "call, h.0.attn: 1)."),
            std::string::npos)
      << a.verdict;
  const Analysis alloc = analyze_file("nsys/pitfall_alloc.sqlite");
  EXPECT_NE(alloc.verdict.find("1 cudaFree, 1 cudaMalloc per iteration (in forward)."), std::string::npos)
      << alloc.verdict;
}

}  // namespace
}  // namespace laptime::trace
