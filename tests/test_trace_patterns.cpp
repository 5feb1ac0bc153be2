// The rules that find the iteration ranges (trace/analyses/iterations.h), on small traces written by
// tests/fixtures/make_pattern_traces.py with the answers it computes on its own: numbering
// with gaps, nested families, two threads and two streams, emit_nvtx's suffixed names, a tie,
// and no family at all.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "trace/analyses/iterations.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/analyses/analyze.h"
#include "trace/model/format.h"

namespace laptime::trace {
namespace {

std::string fixture(const std::string& name) {
  const char* env = std::getenv("LAPTIME_SOURCE_DIR");
  return std::string(env && *env ? env : LAPTIME_SOURCE_DIR) + "/tests/fixtures/" + name;
}

nlohmann::json expected() {
  std::ifstream f(fixture("pattern_traces.expected.json"));
  std::stringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str());
}

class Pattern : public testing::TestWithParam<std::string> {};

TEST_P(Pattern, DefaultRulesGiveTheGeneratorsAnswer) {
  const nlohmann::json want = expected().at(GetParam());
  const Trace t = load_nsys_sqlite(fixture("pattern_" + GetParam() + ".sqlite"));
  const TraceJoin j(t);
  if (want.contains("error")) {
    std::string error;
    try {
      analyze(j, {});
    } catch (const TraceError& e) {
      error = e.what();
    }
    EXPECT_EQ(error.rfind(want["error"].get<std::string>(), 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);  // one sentence
    return;
  }
  const Analysis a = analyze(j, {});
  EXPECT_EQ(a.range_name, want["glob"].get<std::string>());
  ASSERT_EQ(a.iterations.size(), want["numbers"].size());
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    EXPECT_EQ(a.iterations[i].index, want["numbers"][i].get<uint64_t>());
    EXPECT_EQ(a.iterations[i].start, want["starts"][i].get<Ns>());
  }
  EXPECT_EQ(numbered_families(j).size(), want["families"].get<size_t>());
  // Every iteration holds its GPU work, on whichever stream it ran.
  for (const Iteration& it : a.iterations) EXPECT_TRUE(it.has_gpu) << it.index;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Pattern,
                         testing::Values("gaps", "nested", "two_threads", "emit_nvtx", "tie", "none"));

TEST(Pattern, RuleSaysWhyTheFamilyWon) {
  const Trace t = load_nsys_sqlite(fixture("pattern_nested.sqlite"));
  const TraceJoin j(t);
  EXPECT_EQ(analyze(j, {}).range_rule,
            "ranges named alike but for a number, on main, in number order; of 2 families, the outermost "
            "(`Forward Pass Iter *` nests in it) (--range to choose another)");
  const Trace t2 = load_nsys_sqlite(fixture("pattern_two_threads.sqlite"));
  const TraceJoin j2(t2);
  const Analysis a = analyze(j2, {});
  EXPECT_NE(a.range_rule.find("the one holding the most GPU launches"), std::string::npos) << a.range_rule;
  EXPECT_EQ(t2.nvtx[a.iterations[0].nvtx].kind, NvtxKind::StartEnd);
}

TEST(Pattern, RangeOptionPicksAnyFamilyOrName) {
  const Trace t = load_nsys_sqlite(fixture("pattern_two_threads.sqlite"));
  const TraceJoin j(t);
  ReportOptions o;
  o.range = "re:load batch \\d+";  // the loader thread's ranges, in its own domain
  Analysis a = analyze(j, o);
  EXPECT_EQ(a.iterations.size(), 20u);
  EXPECT_EQ(a.bound, Bound::NoGpuWork);
  o.range = "Forward Pass Iter *";
  a = analyze(j, o);
  EXPECT_EQ(a.iterations.size(), 5u);
  EXPECT_EQ(a.range_rule, "--range, in the order of the numbers in their names");

  const Trace tie = load_nsys_sqlite(fixture("pattern_tie.sqlite"));
  const TraceJoin jt(tie);
  o.range = "worker 1 step *";  // what the tie's error suggests, for the other one
  a = analyze(jt, o);
  ASSERT_EQ(a.iterations.size(), 3u);
  EXPECT_EQ(tie.thread_name(tie.nvtx[a.iterations[0].nvtx].pid, tie.nvtx[a.iterations[0].nvtx].tid), "worker");

  const Trace none = load_nsys_sqlite(fixture("pattern_none.sqlite"));
  const TraceJoin jn(none);
  o.range = "Forward Pass Iter *";  // a number used twice: by time, numbered by position
  a = analyze(jn, o);
  ASSERT_EQ(a.iterations.size(), 4u);
  EXPECT_EQ(a.range_rule, "--range, in time order");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.iterations[i].index, i);
}

TEST(Pattern, TheGlobAFamilyIsShownWithSelectsItAgain) {
  const Trace t = load_nsys_sqlite(fixture("pattern_emit_nvtx.sqlite"));
  const TraceJoin j(t);
  const Analysis found = analyze(j, {});
  ReportOptions o;
  o.range = found.range_name;  // "ProfilerStep#*, *"
  const Analysis again = analyze(j, o);
  ASSERT_EQ(again.iterations.size(), found.iterations.size());
  for (size_t i = 0; i < found.iterations.size(); ++i) {
    EXPECT_EQ(again.iterations[i].nvtx, found.iterations[i].nvtx);
    EXPECT_EQ(again.iterations[i].index, found.iterations[i].index);  // the step number, not the op_id
  }
}

TEST(Pattern, GlobsAndRegexesMatchWholeNames) {
  EXPECT_TRUE(glob_match("Forward Pass Iter *", "Forward Pass Iter 12"));
  EXPECT_TRUE(glob_match("*Iter*", "Forward Pass Iter 12"));
  EXPECT_TRUE(glob_match("ProfilerStep#?", "ProfilerStep#3"));
  EXPECT_FALSE(glob_match("ProfilerStep#?", "ProfilerStep#12"));
  EXPECT_FALSE(glob_match("Forward Pass Iter *", "Forward Pass Iteration 1"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(RangePattern("re:step_\\d+").matches("step_7"));
  EXPECT_FALSE(RangePattern("re:step_\\d+").matches("step_7 extra"));  // whole name, not a search
  EXPECT_TRUE(RangePattern("forward").matches("forward"));
  EXPECT_FALSE(RangePattern("forward").matches("forward2"));
  std::string error;
  try {
    RangePattern("re:step_(");
  } catch (const TraceError& e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("--range re:step_( is not a regular expression that compiles", 0), 0u) << error;
}

TEST(Pattern, LayerTablesFoldTheNumberThatCountsBlocksNotTheOneThatNamesALayer) {
  EXPECT_EQ(detail::fold_indices("h.3.attn"), "h.*.attn");
  EXPECT_EQ(detail::fold_indices("h.3.ln_1"), "h.*.ln_1");  // ln_1 and ln_2 are different layers
  EXPECT_EQ(detail::fold_indices("layer2.1.conv2"), "layer2.*.conv2");
  EXPECT_EQ(detail::fold_indices("Layer 11"), "Layer *");
  EXPECT_EQ(detail::fold_indices("ProfilerStep#12"), "ProfilerStep#*");
  EXPECT_EQ(detail::fold_indices("Forward Pass Iter 7"), "Forward Pass Iter *");
  EXPECT_EQ(detail::fold_indices("step_7"), "step_7");
  EXPECT_EQ(detail::number_runs({1, 2, 3, 5, 7, 8}), "1-3, 5, 7-8");
  EXPECT_EQ(detail::number_runs({6}), "6");
}

}  // namespace
}  // namespace laptime::trace
