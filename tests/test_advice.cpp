// Advice in the user's terms: who made a trace (trace/analyses/program.h) on captures whose
// makers are known (laptime's bench under nsys, the lesson's PyTorch loop, a CUDA program of its
// own, two programs in one capture), and what the verdict and `laptime kernels` then suggest:
// PyTorch's remedies to a PyTorch loop, laptime's flags to laptime's runs, CUDA's to the rest.
#include <string>

#include <gtest/gtest.h>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/program.h"
#include "trace/ncu/ncu_layers.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {
namespace {

using testing_support::error_of;
using testing_support::fixture;
using testing_support::printed;

Analysis analyzed(const std::string& name, ReportOptions o = {}) {
  const Trace t = load_nsys_sqlite(fixture(name));
  return analyze(TraceJoin(t), o);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Advice, WhoMadeTheTrace) {
  EXPECT_EQ(analyzed("nsys/gpt2_bf16.sqlite").program, Program::Laptime);  // laptime bench under nsys
  EXPECT_EQ(analyzed("graph/laptime_resnet50_graph_cupti.sqlite").program, Program::Laptime);  // its own tracer
  EXPECT_EQ(analyzed("lesson/resnet50_clean.sqlite").program, Program::PyTorch);               // lesson_loop.py
  EXPECT_EQ(analyzed("graph/graph_cases.sqlite").program, Program::Other);                     // graph_cases.cu
  const Trace two = load_nsys_sqlite(fixture("process_two_programs.sqlite"));                  // laptime beside python
  EXPECT_EQ(identify_program(two, 5100u), Program::Laptime);
  EXPECT_EQ(identify_program(two, 5200u), Program::PyTorch);
}

// The lesson's ResNet-50 loop is launch-bound: PyTorch's graphs and torch.compile, never laptime's flag.
TEST(Advice, APyTorchLoopGetsPyTorchsRemedies) {
  const Analysis a = analyzed("lesson/resnet50_clean.sqlite");
  ASSERT_EQ(a.bound, Bound::LaunchBound);
  EXPECT_TRUE(has(a.verdict, "torch.cuda.graphs")) << a.verdict;
  EXPECT_TRUE(has(a.verdict, "torch.compile(mode=\"reduce-overhead\")")) << a.verdict;
  EXPECT_FALSE(has(a.verdict, "laptime bench")) << a.verdict;
}

TEST(Advice, LaptimesRunsGetLaptimesFlags) {
  const Analysis eager = analyzed("graph/laptime_gpt2_b1_eager.sqlite");
  ASSERT_EQ(eager.bound, Bound::LaunchBound);
  EXPECT_TRUE(has(eager.verdict, "`laptime bench --graph`")) << eager.verdict;
  EXPECT_FALSE(has(eager.verdict, "torch")) << eager.verdict;
  const Analysis sync = analyzed("nsys/sync_gpt2.sqlite");  // `laptime bench gpt2 --pitfall sync`
  ASSERT_EQ(sync.bound, Bound::SyncBound);
  EXPECT_TRUE(has(sync.verdict, "`--pitfall sync`")) << sync.verdict;
  EXPECT_FALSE(has(sync.verdict, ".item()")) << sync.verdict;
}

// A PyTorch ncu report without costs: what the roofline needs, and how a PyTorch user gets it.
TEST(Advice, APyTorchNcuReportSaysWhatTheRooflineNeeds) {
  const NcuReport torch = read_ncu_report(fixture("ncu/torch_resnet50_layers.csv"));
  const NcuLayers l = ncu_layers(torch, {}, nullptr, nullptr);
  EXPECT_EQ(l.program, Program::PyTorch);
  const std::string text = printed([&](std::FILE* out) { print_ncu_layers(l, out); });
  EXPECT_TRUE(has(text, "FlopCounterMode")) << text;
  EXPECT_TRUE(has(text, "laptime.layers/1")) << text;
  EXPECT_FALSE(has(text, "laptime bench")) << text;
  EXPECT_TRUE(
      has(error_of([&] { write_ncu_roofline_svg(l, testing::TempDir() + "laptime_advice.svg"); }), "FlopCounterMode"));
  // laptime's own report keeps laptime's words.
  const NcuLayers own = ncu_layers(read_ncu_report(fixture("ncu/laptime_gpt2_attn_cudnn.csv")), {}, nullptr, nullptr);
  EXPECT_EQ(own.program, Program::Laptime);
  EXPECT_TRUE(has(printed([&](std::FILE* out) { print_ncu_layers(own, out); }), "`laptime bench ... --json RUN.json`"));
}

}  // namespace
}  // namespace laptime::trace
