// laptime's own `--pitfall sync` under Nsight Systems, as scripts/dev/captures.sh pitfalls
// captures it on a GPU machine (files under tests/fixtures/nsys/): at every layer end the
// bench copies a value to the host on the compute stream and waits for that stream, as
// `.item()` and Python's max() do. The analyzer must see the host wait for the forward pass.
// Each test skips, saying so, while its capture has not been committed.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "support/nsys_csv.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/analyze.h"

namespace laptime::trace {
namespace {

std::string nsys_fixture(const std::string& name) {
  const char* env = std::getenv("LAPTIME_SOURCE_DIR");
  return std::string(env && *env ? env : LAPTIME_SOURCE_DIR) + "/tests/fixtures/nsys/" + name;
}

#define SKIP_WITHOUT(name)                                                   \
  if (!std::filesystem::exists(nsys_fixture(std::string(name) + ".sqlite"))) \
  GTEST_SKIP() << "tests/fixtures/nsys/" << (name)                           \
               << ".sqlite is not committed yet: capture it on a GPU "       \
                  "machine with scripts/dev/captures.sh pitfalls"

struct Captured {
  Trace trace;
  Analysis analysis;
};

const Captured& capture(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Captured>> cache;
  auto& c = cache[name];
  if (!c) {
    c = std::make_unique<Captured>();
    c->trace = load_nsys_sqlite(nsys_fixture(name + ".sqlite"));
    const TraceJoin j(c->trace);
    c->analysis = analyze(j, {});
  }
  return *c;
}

// The host waits in every steady iteration, for the compute stream's work: stalls, each one
// waiting at least until the work queued before it had run, none returning early.
void expect_the_host_waits(const std::string& name) {
  const Captured& c = capture(name);
  const Analysis& a = c.analysis;
  ASSERT_GT(a.steady_count, 0u);
  std::map<int64_t, size_t> syncs, stalls;
  for (const SyncCall& s : a.syncs) {
    EXPECT_NE(s.effect, SyncEffect::ReturnedAtOnce) << s.api << " in " << s.range << ", iteration " << s.iteration;
    if (s.api == "cudaStreamSynchronize") ++syncs[s.iteration];
    if (s.effect == SyncEffect::Stall) {
      ++stalls[s.iteration];
    }
  }
  // As many read-backs as device-to-host copies launched in the iteration, the same in each.
  std::map<int64_t, size_t> copies;
  const TraceJoin j(c.trace);
  for (const GpuOp& op : j.ops()) {
    if (op.kind != GpuOp::Kind::Memcpy || c.trace.memcpys[op.index].kind != CopyKind::DtoH || op.api < 0) continue;
    const ApiCall& call = c.trace.api_calls[op.api];
    for (const Iteration& it : a.iterations)
      if (it.steady() && call.start >= it.start && call.end <= it.end) ++copies[static_cast<int64_t>(it.index)];
  }
  for (const Iteration& it : a.iterations) {
    if (!it.steady()) continue;
    const auto i = static_cast<int64_t>(it.index);
    EXPECT_GE(syncs[i], 1u) << "iteration " << i;
    EXPECT_EQ(syncs[i], copies[i]) << "iteration " << i;
    EXPECT_EQ(syncs[i], syncs.begin()->second) << "iteration " << i;
    EXPECT_GE(stalls[i], 1u) << "iteration " << i;
  }
  // Every cudaStreamSynchronize nsys counted is accounted for once, in the loop or outside.
  size_t nsys_count = 0, ours = 0;
  for (const auto& row : nsys_csv::table(nsys_fixture(name + "_cuda_api_sum.csv")))
    if (normalize_api_name(row.at("Name")) == "cudaStreamSynchronize") nsys_count += std::stoul(row.at("Num Calls"));
  for (const auto* list : {&a.syncs, &a.syncs_elsewhere})
    for (const SyncCall& s : *list) ours += s.api == "cudaStreamSynchronize";
  EXPECT_EQ(ours, nsys_count);
  // The measured wait, and the verdict calls it a stall with that cost.
  EXPECT_GT(a.sync_stall, 0);
  EXPECT_GT(a.lap_ms, a.lap_without_syncs_ms);
  EXPECT_NE(a.verdict.find("for the compute stream's work to finish"), std::string::npos) << a.verdict;
  EXPECT_NE(a.verdict.find(" per iteration: the host stops until the GPU drains"), std::string::npos) << a.verdict;
  EXPECT_EQ(a.verdict.find("can be stale"), std::string::npos) << a.verdict;
}

TEST(LaptimePitfalls, SyncOnTheCreatedStreamStallsTheHost) {
  SKIP_WITHOUT("pitfall_sync_blocking");
  expect_the_host_waits("pitfall_sync_blocking");
}

TEST(LaptimePitfalls, SyncOnTheDefaultStreamStallsTheHost) {
  SKIP_WITHOUT("pitfall_sync_blocking_default_stream");
  expect_the_host_waits("pitfall_sync_blocking_default_stream");
}

TEST(LaptimePitfalls, SyncCostEstimateMatchesTheCleanRun) {
  SKIP_WITHOUT("pitfall_sync_blocking");
  SKIP_WITHOUT("bench_gpt2_clean");
  const Analysis& a = capture("pitfall_sync_blocking").analysis;
  const Analysis& clean = capture("bench_gpt2_clean").analysis;
  EXPECT_TRUE(clean.syncs.empty());
  const double predicted = a.lap_ms - a.lap_without_syncs_ms, measured = a.lap_ms - clean.lap_ms;
  ASSERT_GT(measured, 0) << "the pitfall run is not slower than the clean one";
  EXPECT_NEAR(predicted, measured, 0.2 * measured) << a.verdict;
}

}  // namespace
}  // namespace laptime::trace
