// The nsys -> ncu handoff (trace/ncu/ncu_handoff.h): the captured command line against the
// capture's own META_DATA_CAPTURE rows, the iteration against analyze's median steady one, and
// the printed words through bash, byte for byte: hostile words (control characters, bytes that
// are not UTF-8, quotes), a working folder named `-`, names ncu's filter cannot carry, a gap in
// the recorded arguments, a scrubbed command, an empty program.
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/ncu/ncu_handoff.h"
#include "trace/model/text.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sqlite.h"

namespace laptime::trace {
namespace {

using testing_support::error_of;
using testing_support::fixture;
using testing_support::printed;
using testing_support::temp_path;

std::vector<std::string> shell_split(const std::string& command) { return testing_support::bash_words(command); }

// A copy of a committed capture whose META_DATA_CAPTURE holds `rows` (name, value) instead, and
// `sql` run on it after (its own statements, one at a time).
std::string capture_with(const std::string& name, const std::vector<std::pair<std::string, std::string>>& rows,
                         const std::vector<std::string>& sql = {}) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string path = temp_path("handoff", test + ".sqlite");
  std::filesystem::copy_file(fixture(name), path, std::filesystem::copy_options::overwrite_existing);
  sqlite::Db db(path, SQLITE_OPEN_READWRITE);
  db.exec("CREATE TABLE IF NOT EXISTS META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT)");
  db.exec("DELETE FROM META_DATA_CAPTURE");
  for (const auto& [n, v] : rows) {
    sqlite::Stmt s(db.get(), "INSERT INTO META_DATA_CAPTURE VALUES (?, ?)");
    s.bind(1, n);
    s.bind(2, v);
    s.insert();
  }
  for (const std::string& q : sql) db.exec(q);
  return path;
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

// Any bytes at all: each word through shell_word comes back from bash as it went in, and the line
// is printable text (a terminal shows it as it is, escape_name leaves it unchanged). Fresh random
// words every run, and the cases single quotes cannot carry through a terminal.
TEST(ShellWord, EveryWordComesBackFromBashByteForByte) {
  std::vector<std::string> words{"python3",
                                 "-c",
                                 "import sys\nprint(sys.argv)",
                                 "tab\there",
                                 "\x1b[31mred\x1b[0m",
                                 "bad\xff\xfe bytes",
                                 "it's",
                                 "x$(touch X)",
                                 "",
                                 "!!",
                                 "back\\slash",
                                 "c1 \xc2\x9b",
                                 "nonchar \xef\xbf\xbe",
                                 "\xc3\xa9t\xc3\xa9",
                                 "'",
                                 "\\'",
                                 "$'x'",
                                 "-",
                                 "\x7f"};
  std::mt19937 rng(std::random_device{}());
  for (int n = 0; n < 200; ++n) {
    std::string w(rng() % 12, ' ');
    for (char& c : w) c = static_cast<char>(1 + rng() % 255);  // no NUL: no program's argument holds one
    words.push_back(w);
  }
  const std::string line = shell_words(words);
  EXPECT_EQ(escape_name(line), line) << "the line holds what a terminal would act on";
  const std::vector<std::string> back = shell_split(line);
  ASSERT_EQ(back.size(), words.size());
  for (size_t i = 0; i < words.size(); ++i) EXPECT_TRUE(back[i] == words[i]) << i << ": " << escape_name(words[i]);
  // Plain words stay plain; what single quotes carry stays in single quotes.
  EXPECT_EQ(shell_word("runs/rank_0.sqlite"), "runs/rank_0.sqlite");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("a\nb"), "$'a\\x0Ab'");
  EXPECT_EQ(shell_cd("-"), "cd ./- && ");
  EXPECT_EQ(shell_cd("-x y"), "cd './-x y' && ");
}

// `python3 -c '<two lines>'` recorded by nsys, run from a folder named `-`: the printed line hands
// the program the same words (before: \x0A after quoting, a literal backslash; and `cd -`).
TEST(NcuHandoff, TheCapturedWordsReachTheProgramAsRecorded) {
  const std::vector<std::string> argv{"python3", "-c", "import sys\nprint(sys.argv)", "\x1b[31m", "caf\xe9"};
  const std::string trace = capture_with("nsys/gpt2_bf16.sqlite", {{"PROCESS_0:COMMAND", argv[0]},
                                                                   {"PROCESS_0:ARGUMENT_0", argv[1]},
                                                                   {"PROCESS_0:ARGUMENT_1", argv[2]},
                                                                   {"PROCESS_0:ARGUMENT_2", argv[3]},
                                                                   {"PROCESS_0:ARGUMENT_3", argv[4]},
                                                                   {"PROCESS_0:WORKING_DIR", "-"}});
  NcuHandoffOptions o;
  o.trace = trace;
  o.output = "\x1b[2Jout";  // an escape sequence in -o
  const NcuCommand c = ncu_handoff(o);
  ASSERT_EQ(c.ncu.rfind("cd ./- && ", 0), 0u) << c.ncu;
  const std::vector<std::string> words = shell_split(c.ncu.substr(std::string("cd ./- && ").size()));
  ASSERT_GE(words.size(), argv.size());
  EXPECT_EQ(std::vector<std::string>(words.end() - static_cast<long>(argv.size()), words.end()), argv);
  EXPECT_EQ(shell_split(c.read), (std::vector<std::string>{"laptime", "kernels", "\x1b[2Jout.ncu-rep"}));
  const std::string text = printed([&](std::FILE* out) { print_ncu_command(c, out); });
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
}

TEST(NcuHandoff, AGapInTheRecordedArgumentsIsRefused) {
  const std::string trace =
      capture_with("nsys/gpt2_bf16.sqlite",
                   {{"PROCESS_0:COMMAND", "python3"}, {"PROCESS_0:ARGUMENT_0", "a.py"}, {"PROCESS_0:ARGUMENT_2", "x"}});
  EXPECT_EQ(captured_command(trace).gap, "PROCESS_0:ARGUMENT_1 (it has 2 numbered up to 2)");
  NcuHandoffOptions o;
  o.trace = trace;
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            trace +
                " records the captured command with a gap in its arguments (no PROCESS_0:ARGUMENT_1 (it has 2 "
                "numbered up to 2)), so it cannot be rebuilt as it ran: give the program after --, e.g. `laptime "
                "kernels --command --from " +
                trace + " -- python3 ARGS`.");
  o.program = {"python3", "a.py"};  // the program given: the trace's rows are not read
  EXPECT_NO_THROW(ncu_handoff(o));
}

TEST(NcuHandoff, AScrubbedCommandAsksForTheProgram) {
  const std::string trace =
      capture_with("nsys/gpt2_bf16.sqlite", {{"PROCESS_0:COMMAND", "python3"}, {kCommandScrubbedRow, "removed"}});
  NcuHandoffOptions o;
  o.trace = trace;
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            trace +
                " is a copy made by `laptime scrub`, which kept only the program's name (python3) and removed its "
                "arguments and working folder: give the program and its arguments after --, e.g. `laptime kernels "
                "--command --from " +
                trace + " -- python3 ARGS`, run from its folder.");
  o.program = {"python3", "train.py"};
  EXPECT_NO_THROW(ncu_handoff(o));
}

TEST(NcuHandoff, AnEmptyProgramIsRefused) {
  NcuHandoffOptions o;
  o.trace = fixture("nsys/gpt2_bf16.sqlite");
  o.program = {""};
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            "the program after -- is an empty word: give the program to run, e.g. `laptime kernels --command --from " +
                o.trace + " -- python3 train.py`.");
}

// ncu's --nvtx-include has no escape for '/' and '@': a range or layer holding one is refused.
TEST(NcuHandoff, NamesNcusFilterCannotCarryAreRefused) {
  NcuHandoffOptions o;
  o.trace = fixture("lesson/gpt2_clean.sqlite");
  o.program = {"python3", "loop.py"};
  o.within = "Layer/1";
  EXPECT_EQ(error_of([&] { ncu_handoff(o); }),
            "--within `Layer/1` holds a '/', which ncu's --nvtx-include reads as a separator ('@' between domain and "
            "range, '/' between nested ranges) and cannot escape: ncu cannot select this range by name.");
  o.within.clear();
  o.trace = capture_with("lesson/gpt2_clean.sqlite", {},
                         {"UPDATE StringIds SET value = replace(value, 'Forward Pass', 'Forward@Pass')",
                          "UPDATE NVTX_EVENTS SET text = replace(text, 'Forward Pass', 'Forward@Pass')"});
  const std::string e = error_of([&] { ncu_handoff(o); });
  EXPECT_EQ(e.rfind("the iteration range `Forward@Pass Iter ", 0), 0u) << e;
  EXPECT_NE(e.find("` holds a '@', which ncu's --nvtx-include reads as a separator"), std::string::npos) << e;
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
