// The verdict's heading follows the largest measured cause (docs/PROFILING.md §8.9), and says
// where the synchronizations sit, folded by block index. Checked against
// tests/fixtures/verdict_reference.py, which computes the idle time's split, the heading and the
// places from each trace's SQLite tables on its own (verdict_reference.expected.json): the three
// traces make_verdict_traces.py writes (sync-bound, launch-bound with syncs, GPU-bound with syncs),
// laptime's own `--pitfall sync` captures (GPT-2 and ResNet-50) and allocation capture, and the
// lesson's PyTorch loops.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/nsys_csv.h"
#include "support/trace_testing.h"
#include "trace/write/analysis_json.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/analyze.h"

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

// The real thing, captured on the H200 by scripts/dev/captures.sh processes (`laptime bench gpt2 -b 8
// --pitfall sync`, `bench resnet50 -b 32 --pitfall sync`; the bench's own report beside each,
// .bench.log): a read-back and a stream synchronize at every layer's end. The counts come from the
// capture: one per layer range in every steady iteration (GPT-2: 9 per block, 12 blocks, and wte,
// ln_f, lm_head; ResNet-50: its 53 convolutions, the pool and fc), and nsys's own call count.
TEST(Verdict, RealPitfallSyncCapturesAreSyncBoundAndNameEveryLayer) {
  struct Case {
    const char* name;
    size_t per_iteration, places;
    const char* in;
  };
  for (const Case& c : {Case{"sync_gpt2", 111, 12,
                             "111 cudaStreamSynchronize per iteration (in h.*.ln_1: 12 per iteration, h.*.attn.c_attn: "
                             "12, h.*.attn.core: 12, h.*.attn.c_proj: 12, and 8 more places)."},
                        Case{"sync_resnet50", 55, 19,
                             "55 cudaStreamSynchronize per iteration (in layer3.*.conv1: 6 per iteration, "
                             "layer3.*.conv2: 6, layer3.*.conv3: 6, layer2.*.conv1: 4, and 15 more places)."}}) {
    const std::string file = std::string("nsys/") + c.name + ".sqlite";
    if (!std::filesystem::exists(fixture(file))) GTEST_SKIP() << file << " is not committed";
    const Analysis a = analyze_file(file);
    EXPECT_EQ(a.bound, Bound::SyncBound) << c.name << ": " << a.verdict;
    EXPECT_NE(a.verdict.find(c.in), std::string::npos) << c.name << ": " << a.verdict;
    ASSERT_EQ(a.syncs.size(), c.per_iteration * a.steady_count) << c.name;
    EXPECT_EQ(a.sync_places.size(), c.places) << c.name;
    size_t placed = 0;
    for (const SyncPlace& p : a.sync_places) placed += p.count;
    EXPECT_EQ(placed, a.syncs.size()) << c.name;
    size_t nsys_count = 0, ours = 0;
    for (const auto& row : laptime::nsys_csv::table(fixture(std::string("nsys/") + c.name + "_cuda_api_sum.csv")))
      if (normalize_api_name(row.at("Name")) == "cudaStreamSynchronize") nsys_count = std::stoul(row.at("Num Calls"));
    for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
      for (const SyncCall& s : *list) ours += s.api == "cudaStreamSynchronize";
    EXPECT_EQ(ours, nsys_count) << c.name;  // each one nsys counted, in the loop or outside it
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
