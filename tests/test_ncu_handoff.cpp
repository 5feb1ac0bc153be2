// The nsys -> ncu handoff (trace/ncu/ncu_handoff.h): the captured command line against the
// capture's own META_DATA_CAPTURE rows, the iteration against analyze's median steady one, and
// the printed words through a real shell.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/ncu/ncu_handoff.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {
namespace {

using testing_support::error_of;
using testing_support::fixture;

// The words a command line gives back when a shell runs printf over them.
std::vector<std::string> shell_split(const std::string& command) {
  std::FILE* p = popen(("printf '%s\\0' " + command).c_str(), "r");
  std::string out;
  for (int c; p && (c = std::fgetc(p)) != EOF;) out += static_cast<char>(c);
  if (p) pclose(p);
  std::vector<std::string> words;
  for (size_t at = 0, end; (end = out.find('\0', at)) != std::string::npos; at = end + 1)
    words.push_back(out.substr(at, end - at));
  return words;
}

TEST(NcuHandoff, TheCapturedCommandIsTheExportsOwn) {
  const std::string file = fixture("nsys/gpt2_bf16.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT name, value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_0:%' ORDER BY rowid",
                         -1, &s, nullptr),
      SQLITE_OK);
  std::vector<std::string> argv;
  std::string folder;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    const std::string value = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    if (name == "PROCESS_0:COMMAND" || name.rfind("PROCESS_0:ARGUMENT_", 0) == 0) argv.push_back(value);
    if (name == "PROCESS_0:WORKING_DIR") folder = value;
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  const CapturedCommand c = captured_command(file);
  EXPECT_EQ(c.argv, argv);
  EXPECT_EQ(c.working_dir, folder);
  EXPECT_TRUE(captured_command(fixture("lesson/gpt2_clean.sqlite")).argv.empty());  // its export has none
}

// The lesson's loop names each iteration: the median steady one by name, its kernels counted.
TEST(NcuHandoff, ANumberedIterationIsNamedAndEveryWordQuoted) {
  const Trace t = load_nsys_sqlite(fixture("lesson/gpt2_clean.sqlite"));
  ReportOptions ro;
  ro.scope = AnalysisScope::Iterations;
  const Analysis a = analyze(TraceJoin(t), ro);
  const Iteration& median = a.iterations[static_cast<size_t>(a.svg_iteration)];
  NcuHandoffOptions o;
  o.trace = fixture("lesson/gpt2_clean.sqlite");
  o.program = {"python3", "my loop.py", "--name", "x$(touch X)'y"};
  o.output = "lesson run";
  const NcuCommand c = ncu_handoff(o);
  EXPECT_EQ(c.kernels, static_cast<int>(median.kernels));
  const std::vector<std::string> words = shell_split(c.ncu);
  ASSERT_GE(words.size(), 8u);
  EXPECT_EQ(std::vector<std::string>(words.begin(), words.begin() + 4),
            (std::vector<std::string>{"ncu", "--nvtx", "--nvtx-include",
                                      t.nvtx[static_cast<size_t>(median.nvtx)].text.str() + "/"}));
  EXPECT_EQ(std::vector<std::string>(words.end() - 4, words.end()), o.program);
  for (const std::string& s : ncu_sections()) EXPECT_NE(c.ncu.find("--section " + s), std::string::npos) << s;
  EXPECT_NE(c.ncu.find("--print-units base -f -o 'lesson run' "), std::string::npos) << c.ncu;
  EXPECT_EQ(c.read, "laptime kernels 'lesson run.ncu-rep'");
  EXPECT_EQ(c.ncu.find("--launch-skip"), std::string::npos);  // the name alone picks one iteration
  EXPECT_GT(c.seconds, c.kernels * ncu_seconds_per_kernel() - 1e-9);
}

// laptime's `forward` is every iteration's name: the kernels before the median one are skipped.
TEST(NcuHandoff, ASharedRangeNameSkipsToTheMedianIteration) {
  const Trace t = load_nsys_sqlite(fixture("nsys/gpt2_bf16.sqlite"));
  ReportOptions ro;
  ro.scope = AnalysisScope::Iterations;
  const Analysis a = analyze(TraceJoin(t), ro);
  size_t before = 0;
  for (int i = 0; i < a.svg_iteration; ++i) before += a.iterations[static_cast<size_t>(i)].kernels;
  NcuHandoffOptions o;
  o.trace = fixture("nsys/gpt2_bf16.sqlite");
  const NcuCommand c = ncu_handoff(o);
  const CapturedCommand captured = captured_command(o.trace);
  const std::vector<std::string> words = shell_split(c.ncu.substr(c.ncu.find("&& ") + 3));
  EXPECT_EQ(c.ncu.rfind("cd " + captured.working_dir + " && ", 0), 0u) << c.ncu;
  EXPECT_EQ(words[3], "laptime@forward/");
  EXPECT_EQ(words[4], "--launch-skip");
  EXPECT_EQ(words[5], std::to_string(before));
  EXPECT_EQ(words[7], std::to_string(a.iterations[static_cast<size_t>(a.svg_iteration)].kernels));
  EXPECT_EQ(std::vector<std::string>(words.end() - static_cast<long>(captured.argv.size()), words.end()),
            captured.argv);
  o.within = "h.0";
  const NcuCommand block = ncu_handoff(o);
  EXPECT_NE(block.ncu.find("laptime@forward/h.0/"), std::string::npos);
  EXPECT_LT(block.kernels, c.kernels);
  o.within = "no.such.layer";
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            "no kernel runs inside a range named `no.such.layer` in the steady iteration: name a layer range of it.");
}

TEST(NcuHandoff, ATraceWithoutItsCommandAsksForIt) {
  NcuHandoffOptions o;
  o.trace = fixture("lesson/gpt2_clean.sqlite");
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            o.trace +
                " does not record the command it captured (META_DATA_CAPTURE): give the program after --, e.g. "
                "`laptime kernels --command --from " +
                o.trace + " -- python3 train.py`.");
}

}  // namespace
}  // namespace laptime::trace
