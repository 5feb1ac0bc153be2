// GemmTuner::charge (layers/gemm_tuner.h): in Graph the GPU's time alone decides; in Eager a
// candidate is charged its host enqueue cost where that is larger (an fp8 plan
// with one more launch must not win an eager batch-1 loop on GPU time alone). A candidate whose
// host side takes a known time (a 2 ms sleep before one small memset) tells the two apart without
// depending on how fast this machine launches. core/timing.h's direct launches (an eager build's
// candidates): queued behind the host before the GPU starts, so the host's time is not in them.
#include <chrono>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "core/buffer.h"
#include "core/check.h"
#include "core/timing.h"
#include "layers/gemm_tuner.h"
#include "tests/support/compare.h"

namespace laptime {
namespace {

constexpr double kHostMs = 2.0;

// A candidate whose host side takes kHostMs (a sleep) before one 4 KiB memset on the stream.
std::function<bool()> slow_host_memset(const Context& ctx, DeviceBuffer& buf) {
  return [&ctx, &buf] {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kHostMs));
    CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), ctx.stream()));
    return true;
  };
}

TEST(GemmTunerCharge, EagerChargesTheHostGraphDoesNot) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  DeviceBuffer buf(4096);
  const auto run = slow_host_memset(ctx, buf);
  GemmTuner graph, eager;
  eager.set_replay(GemmTuner::Replay::Eager);
  const float g = graph.charge(ctx, run), e = eager.charge(ctx, run);
  EXPECT_GE(e, kHostMs) << "eager charge " << e << " ms";
  EXPECT_LT(g, kHostMs / 4) << "graph charge " << g << " ms: a 4 KiB memset's GPU time";
}

TEST(GemmTunerCharge, ARefusalStaysARefusal) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  GemmTuner eager;
  eager.set_replay(GemmTuner::Replay::Eager);
  std::string why;
  EXPECT_LT(eager.charge(
                ctx, [] { return false; }, &why),
            0.f);
  EXPECT_FALSE(why.empty());
}

TEST(CandidateTiming, DirectRunsAreQueuedBeforeTheyAreTimed) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  DeviceBuffer buf(4096);
  const auto run = slow_host_memset(ctx, buf);
  // Timed as they were enqueued, the runs would measure the host's 2 ms each.
  const float d = time_candidate(ctx.stream(), run, nullptr, CandidateLaunch::Direct);
  EXPECT_GT(d, 0.f);
  EXPECT_LT(d, kHostMs / 4) << "direct time " << d << " ms: a 4 KiB memset's GPU time";
  // The eager charge still adds the host where it is the slower side.
  GemmTuner eager;
  eager.set_replay(GemmTuner::Replay::Eager);
  EXPECT_GE(eager.charge(ctx, run), kHostMs);
}

TEST(CandidateTiming, ADirectRunThatThrowsLeavesTheStreamIdle) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  DeviceBuffer buf(4096);
  int calls = 0;
  auto run = [&] {
    CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), ctx.stream()));
    if (++calls == 3) throw Error("refused on its third call");  // inside the first timed replay
    return true;
  };
  std::string why;
  EXPECT_LT(time_candidate(ctx.stream(), run, &why, CandidateLaunch::Direct), 0.f);
  EXPECT_EQ(why, "refused on its third call");
  EXPECT_EQ(cudaStreamQuery(ctx.stream()), cudaSuccess);  // the held stream was let go and drained
  CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

}  // namespace
}  // namespace laptime
