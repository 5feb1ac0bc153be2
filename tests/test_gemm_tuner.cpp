// GemmTuner::charge (layers/gemm_tuner.h): in Graph the GPU's time alone decides; in Eager a
// candidate is charged its host enqueue cost where that is larger (issue 29's item 3: an fp8 plan
// with one more launch must not win an eager batch-1 loop on GPU time alone). A candidate whose
// host side takes a known time (a 2 ms sleep before one small memset) tells the two apart without
// depending on how fast this machine launches.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "core/buffer.h"
#include "core/check.h"
#include "layers/gemm_tuner.h"
#include "tests/support/compare.h"

namespace laptime {
namespace {

TEST(GemmTunerCharge, EagerChargesTheHostGraphDoesNot) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  DeviceBuffer buf(4096);
  constexpr double kHostMs = 2.0;
  auto run = [&] {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kHostMs));
    CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, buf.bytes(), ctx.stream()));
    return true;
  };
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
  EXPECT_LT(eager.charge(ctx, [] { return false; }, &why), 0.f);
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace laptime
