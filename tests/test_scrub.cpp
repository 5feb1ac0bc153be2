// `laptime scrub` (trace/capture/scrub.h): no committed trace carries the capturing machine's
// environment or identifiers; a trace planted with them (environment variables with a token, the
// host name, a process list, the program's output, the export's user and paths, the GPU's UUID,
// a key among the command's arguments, columns and tables laptime does not read under names
// like its own) comes out without any of them and reads exactly as it did; the command line
// kernels rebuilds is the program's base name unless --keep-command; a table named like SQL
// runs none of it (every other file of the folder byte for byte as it was); hundreds of tables
// and quotes in names stay within SQLite's limits; analyze says when a trace carries an
// environment; and the command's refusals are one sentence.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"
#include "trace/analyses/analyze.h"
#include "trace/analyses/processes.h"
#include "trace/capture/scrub.h"
#include "trace/ncu/ncu_handoff.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sqlite.h"
#include "trace/write/analysis_json.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

namespace fs = std::filesystem;
using laptime::testing_support::run_shell;
using ::testing::HasSubstr;
using testing_support::error_of;
using testing_support::fixture;
using testing_support::read_file;
using testing_support::report_text;
using testing_support::temp_path;

const std::string kLaptime = LAPTIME_BINARY;
const char* const kSecrets[] = {"hunter2-token", "build-host-17",   "alice-secret-output", "GPU-0badc0de",
                                "/home/alice",   "alice-login",     "SECRET-api-key",      "alice-column",
                                "alice-table",   "alice-export-row"};

// A test's own SQL script, several statements at once (laptime itself never runs one: its
// sqlite::Db::exec refuses a string of several).
void exec_script(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

// Every SQLite file committed under tests/fixtures.
std::vector<std::string> committed_traces() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(fixture("")))
    if (e.is_regular_file() && e.path().extension() == ".sqlite") out.push_back(e.path().string());
  return out;
}

// Whether a META_DATA_CAPTURE row is one scrub keeps: the command line and its working folder.
bool command_row(const std::string& name) {
  const std::string arg = "PROCESS_0:ARGUMENT_";
  return name == "PROCESS_0:COMMAND" || name == "PROCESS_0:WORKING_DIR" ||
         (name.rfind(arg, 0) == 0 && name.size() > arg.size() &&
          name.find_first_not_of("0123456789", arg.size()) == std::string::npos);
}

TEST(Scrub, NoCommittedTraceHoldsAnEnvironmentRow) {
  const std::vector<std::string> traces = committed_traces();
  ASSERT_GT(traces.size(), 50u);
  size_t with_command = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    EXPECT_EQ(environment_rows(path), 0u) << "run `laptime scrub` on it before committing";
    sqlite::Db db(path, SQLITE_OPEN_READONLY, sqlite::read_only_uri(path));
    bool capture = false;
    {
      sqlite::Stmt s(db.get(), "SELECT name FROM sqlite_master WHERE type = 'table'");
      while (s.step()) {
        capture = capture || s.text(0) == "META_DATA_CAPTURE";
        for (const char* table : {"TARGET_INFO_SYSTEM_ENV", "PROCESSES", "ANALYSIS_FILE"}) EXPECT_NE(s.text(0), table);
      }
    }
    if (!capture) continue;
    ++with_command;
    sqlite::Stmt s(db.get(), "SELECT name FROM META_DATA_CAPTURE");
    while (s.step())
      EXPECT_TRUE(command_row(s.text(0))) << s.text(0) << ": run `laptime scrub` on it before committing";
  }
  EXPECT_GT(with_command, 0u) << "the nsys captures keep their command lines (kernels --command --from reads them)";
}

// A committed capture with everything scrub must remove planted back into it; named for the
// test too, since CTest runs the tests that plant it at once.
std::string dirty_copy(const std::string& name) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string path = temp_path("scrub", test + "." + name + ".dirty.sqlite");
  fs::copy_file(fixture("nsys/" + name + ".sqlite"), path, fs::copy_options::overwrite_existing);
  sqlite::Db db(path, SQLITE_OPEN_READWRITE);
  exec_script(db.get(), R"SQL(
    CREATE TABLE IF NOT EXISTS META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);
    DELETE FROM META_DATA_CAPTURE;  -- the committed command rows, replaced by a command of its own
    INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', '/home/alice/venv/bin/python3'),
      ('PROCESS_0:USER_NAME', 'alice-login'),
      ('PROCESS_0:ENVIRONMENT_VARIABLE', 'API_TOKEN=hunter2-token'), ('PROCESS_0:ARGUMENT_0', 'train.py'),
      ('PROCESS_0:ENVIRONMENT_VARIABLE', 'HOME=/home/alice'), ('PROCESS_0:ARGUMENT_1', '--steps=3'),
      ('PROCESS_0:ARGUMENT_2', '--api-key=SECRET-api-key'),
      ('PROCESS_0:ARGUMENT_X', 'alice-login'), ('PROCESS_0:WORKING_DIR', '/home/alice/run');
    CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);
    INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local', 'Hostname', 619, 'build-host-17'),
      (1, 'Local', 'DeviceEnvironment', 610, 'API_TOKEN=hunter2-token;HOME=/home/alice');
    CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
    INSERT INTO PROCESSES VALUES (1, 4242, 'ssh alice@build-host-17');
    CREATE TABLE ANALYSIS_FILE (id INTEGER, filename TEXT, contentId INTEGER, globalPid INTEGER);
    INSERT INTO StringIds VALUES (990001, 'alice-secret-output');
    INSERT INTO ANALYSIS_FILE VALUES (0, '/home/alice/stdout.log', 990001, 1);
    INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_HOST', 'build-host-17'), ('EXPORT_PARAM_INPUT_PATH', '/home/alice/r.nsys-rep');
    UPDATE TARGET_INFO_GPU SET uuid = 'GPU-0badc0de', busLocation = '0000:00:06.0';
    -- What the reader does not read, under names like the ones it does.
    ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN userNote TEXT;
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET userNote = 'alice-column';
    CREATE TABLE CUPTI_ACTIVITY_KIND_ALICE (nameId INTEGER, note TEXT);
    INSERT INTO CUPTI_ACTIVITY_KIND_ALICE VALUES (1, 'alice-table');
    CREATE TABLE NVTX_PAYLOAD_ALICE (note TEXT);
    INSERT INTO NVTX_PAYLOAD_ALICE VALUES ('alice-table');
    CREATE TABLE ENUM_ALICE (id INTEGER, name TEXT);
    INSERT INTO ENUM_ALICE VALUES (1, 'alice-table');
    CREATE TABLE ALICE_GRAPH_NOTES (note TEXT);
    INSERT INTO ALICE_GRAPH_NOTES VALUES ('alice-table');
    INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NOTE', 'alice-export-row');
  )SQL");
  return path;
}

// The tables and columns of `path`, by name.
std::map<std::string, std::set<std::string>> tables_and_columns(const std::string& path) {
  std::map<std::string, std::set<std::string>> out;
  sqlite::Db db(path, SQLITE_OPEN_READONLY, sqlite::read_only_uri(path));
  std::vector<std::string> tables;
  {
    sqlite::Stmt s(db.get(), "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (s.step()) tables.push_back(s.text(0));
  }
  for (const std::string& t : tables) {
    sqlite::Stmt s(db.get(), "PRAGMA table_info(" + sqlite::quoted(t) + ")");
    while (s.step()) out[t].insert(s.text(1));
  }
  return out;
}

std::string json_of(const Analysis& a) { return to_json(a).dump(); }

TEST(Scrub, RemovesWhatIdentifiesTheMachineAndReadsTheSame) {
  for (const char* name : {"gpt2_bf16", "two_gpt2"}) {
    for (const bool keep : {false, true}) {
      SCOPED_TRACE(std::string(name) + (keep ? " --keep-command" : ""));
      const std::string dirty = dirty_copy(name),
                        clean = temp_path("scrub", std::string(name) + (keep ? ".keep" : "") + ".clean.sqlite");
      EXPECT_EQ(environment_rows(dirty), 3u);
      EXPECT_THAT(environment_note(dirty), HasSubstr("laptime scrub"));
      fs::remove(clean);
      auto r = run_shell(kLaptime + " scrub " + dirty + " " + clean + (keep ? " --keep-command" : "") + " 2>&1");
      ASSERT_EQ(r.status, 0) << r.out;
      for (size_t at; (at = r.out.find("\n  ", 0)) != std::string::npos;) r.out.replace(at, 3, " ");  // unwrapped
      // It says what it kept and what it removed: every table the reader's list does not name.
      size_t unread = 0;
      for (const auto& [table, columns] : tables_and_columns(dirty)) unread += table_read(table) == nullptr;
      EXPECT_THAT(r.out, HasSubstr("kept: 16 tables laptime reads (StringIds, "));
      EXPECT_THAT(r.out, HasSubstr("removed: " + std::to_string(unread) + " tables laptime does not read, "));
      EXPECT_THAT(r.out, HasSubstr("the environment the trace recorded (3 rows) is gone with them."));
      EXPECT_THAT(r.out, HasSubstr("wrote scrubbed trace: " + clean));
      EXPECT_EQ(environment_rows(clean), 0u);
      EXPECT_EQ(environment_note(clean), "");
      const std::string bytes = read_file(clean);
      for (const char* secret : kSecrets)
        if (!(keep && (std::string(secret) == "/home/alice" || std::string(secret) == "SECRET-api-key"))) {
          EXPECT_EQ(bytes.find(secret), std::string::npos) << secret;
        }
      // The command line kernels rebuilds: the program's base name, or the command as recorded.
      const CapturedCommand cb = captured_command(dirty), ca = captured_command(clean);
      const std::vector<std::string> recorded{"/home/alice/venv/bin/python3", "train.py", "--steps=3",
                                              "--api-key=SECRET-api-key"};
      EXPECT_EQ(cb.argv, recorded);
      if (keep) {
        EXPECT_THAT(r.out, HasSubstr("command: kept as recorded (--keep-command)"));
        EXPECT_EQ(ca.argv, recorded);
        EXPECT_EQ(ca.working_dir, "/home/alice/run");
        EXPECT_FALSE(ca.scrubbed);
      } else {
        EXPECT_THAT(r.out, HasSubstr("its 3 arguments and its working folder removed (--keep-command keeps them)"));
        EXPECT_EQ(ca.argv, std::vector<std::string>{"python3"});
        EXPECT_EQ(ca.working_dir, "");
        EXPECT_TRUE(ca.scrubbed);
      }
      // Only what the reader reads: every table and column of the copy is in its list.
      for (const auto& [table, columns] : tables_and_columns(clean)) {
        const TableRead* t = table_read(table);
        ASSERT_NE(t, nullptr) << table;
        for (const std::string& c : columns) {
          const bool read =
              std::any_of(t->columns.begin(), t->columns.end(), [&](const ColumnRead& x) { return c == x.name; });
          EXPECT_TRUE(read) << table << "." << c;
        }
      }
      // Everything analyze reads, read the same: every process's report, text and JSON.
      const Trace before = load_nsys_sqlite(dirty), after = load_nsys_sqlite(clean);
      const TraceJoin jb(before), ja(after);
      const ProcessChoice pb = choose_processes(jb, "", std::nullopt), pa = choose_processes(ja, "", std::nullopt);
      ASSERT_EQ(pb.reported.size(), pa.reported.size());
      for (size_t i = 0; i < pb.reported.size(); ++i) {
        const Analysis x = analyze(jb, {}, pb.reported[i].set), y = analyze(ja, {}, pa.reported[i].set);
        EXPECT_TRUE(report_text(x) == report_text(y)) << "process " << pb.reported[i].pid;
        EXPECT_TRUE(json_of(x) == json_of(y)) << "process " << pb.reported[i].pid;
      }
      // Scrubbing a scrubbed copy changes nothing that is read.
      const std::string twice = temp_path("scrub", std::string(name) + (keep ? ".keep" : "") + ".twice.sqlite");
      fs::remove(twice);
      ASSERT_EQ(
          run_shell(kLaptime + " scrub " + clean + " " + twice + (keep ? " --keep-command" : "") + " >/dev/null 2>&1")
              .status,
          0);
      const auto once_json = run_shell(kLaptime + " analyze " + clean + " --json - 2>/dev/null");
      EXPECT_EQ(once_json.status, 0);
      EXPECT_TRUE(once_json.out == run_shell(kLaptime + " analyze " + twice + " --json - 2>/dev/null").out);
      EXPECT_EQ(captured_command(twice).argv, ca.argv);
    }
  }
}

// The files of a folder, name -> bytes.
std::map<std::string, std::string> folder_bytes(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read_file(e.path().string());
  return out;
}

// A table named like SQL: before, the name went into SQL text unquoted-within-quotes and run as
// a string of statements, so this one attached a new file and dropped a table of another trace
// in the folder. Now every other file of the folder stays as it was, byte for byte, and no file
// appears but the copy.
TEST(Scrub, SqlInATableNameRunsNoneOfIt) {
  const std::string dir = temp_path("scrub", "injection");
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fixture("nsys/gpt2_bf16.sqlite"), dir + "/victim.sqlite");
  fs::copy_file(fixture("diff_base.sqlite"), dir + "/other.sqlite");
  fs::copy_file(fixture("synthetic_trace.sqlite"), dir + "/hostile.sqlite");
  const std::string injection =
      "CUPTI_A\"); COMMIT; ATTACH DATABASE 'x.sqlite' AS p; CREATE TABLE p.planted (x); "
      "ATTACH DATABASE 'victim.sqlite' AS v; DROP TABLE v.NVTX_EVENTS; --";
  {
    sqlite::Db db(dir + "/hostile.sqlite", SQLITE_OPEN_READWRITE);
    exec_script(db.get(), "CREATE TABLE CUPTI_A (nameId INTEGER); INSERT INTO CUPTI_A VALUES (1);");
    exec_script(db.get(), ("CREATE TABLE " + sql_identifier(injection) + " (nameId INTEGER)").c_str());
  }
  const std::map<std::string, std::string> before = folder_bytes(dir);
  const auto r = run_shell("env -C '" + dir + "' " + kLaptime + " scrub hostile.sqlite out.sqlite 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  std::map<std::string, std::string> after = folder_bytes(dir);
  ASSERT_EQ(after.count("out.sqlite"), 1u) << r.out;
  after.erase("out.sqlite");
  EXPECT_EQ(after.size(), before.size()) << "a file appeared";
  for (const auto& [name, bytes] : before) EXPECT_TRUE(after[name] == bytes) << name << " changed";
  // The copy reads as the trace does; the two tables laptime does not read are not in it.
  EXPECT_EQ(run_shell(kLaptime + " analyze '" + dir + "/out.sqlite' --json - 2>/dev/null").out,
            run_shell(kLaptime + " analyze '" + dir + "/hostile.sqlite' --json - 2>/dev/null").out);
  const auto tables = tables_and_columns(dir + "/out.sqlite");
  EXPECT_EQ(tables.count(injection), 0u);
  EXPECT_EQ(tables.count("CUPTI_A"), 0u);
}

// 600 tables named like the reader's (before: one compound SELECT of 600 terms, past SQLite's 500,
// and a `"` in a kept table's name broke the statement): dropped, never put into SQL; quotes in
// the identifiers laptime does write are doubled.
TEST(Scrub, HundredsOfTablesAndQuotesInNamesStayWithinSqlitesLimits) {
  const std::string path = temp_path("scrub", "many_tables.sqlite"), out = temp_path("scrub", "many_tables.out.sqlite");
  fs::copy_file(fixture("synthetic_trace.sqlite"), path, fs::copy_options::overwrite_existing);
  {
    sqlite::Db db(path, SQLITE_OPEN_READWRITE);
    std::string script = "BEGIN;";
    for (int i = 0; i < 600; ++i)
      script += "CREATE TABLE " + sql_identifier("CUPTI_ACTIVITY_KIND_X\"" + std::to_string(i)) + " (nameId INTEGER);";
    exec_script(db.get(), (script + "COMMIT;").c_str());
  }
  fs::remove(out);
  const auto r = run_shell(kLaptime + " scrub " + path + " " + out + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("removed: 600 tables laptime does not read"));
  for (const auto& [table, columns] : tables_and_columns(out)) EXPECT_NE(table_read(table), nullptr) << table;
  EXPECT_EQ(sql_identifier("a\"b\"\""), "\"a\"\"b\"\"\"\"\"");
}

// One statement at a time: a string of several is refused before any of it runs.
TEST(Scrub, SqliteRunsOneStatementPerCall) {
  sqlite::Db db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec("CREATE TABLE t (x INTEGER) -- a comment after it is no statement");
  EXPECT_THAT(error_of([&] { db.exec("INSERT INTO t VALUES (1); DROP TABLE t"); }),
              HasSubstr("more than one statement"));
  sqlite::Stmt n(db.get(), "SELECT count(*) FROM t");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.i64(0), 0) << "nothing of the refused string ran";
}

TEST(Scrub, AnalyzeNotesAnEnvironmentOnTheNotesStream) {
  const std::string dirty = dirty_copy("gpt2_bf16");
  const auto noted = run_shell(kLaptime + " analyze " + dirty + " 2>&1 >/dev/null");
  EXPECT_EQ(noted.status, 0);
  EXPECT_THAT(noted.out, HasSubstr("laptime: the trace records the capturing process's environment (3 rows"));
  const auto clean = run_shell(kLaptime + " analyze " + fixture("nsys/gpt2_bf16.sqlite") + " 2>&1 >/dev/null");
  EXPECT_EQ(clean.out, "");
}

TEST(Scrub, RefusesInOneSentence) {
  const std::string in = fixture("nsys/gpt2_bf16.sqlite");
  const std::string view = temp_path("scrub", "view.sqlite");
  fs::remove(view);
  {
    sqlite::Db db(view, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    exec_script(db.get(), "CREATE TABLE k (start INTEGER); CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM k;");
  }
  const std::string other = temp_path("scrub", "other.sqlite");
  fs::remove(other);
  {
    sqlite::Db db(other, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    db.exec("CREATE TABLE t (x INTEGER);");
  }
  const std::string out = temp_path("scrub", "out.sqlite");
  struct Case {
    std::string in, out, says;
  };
  for (const Case& c : std::vector<Case>{
           {in, in, "is the same file as the input"},
           {in, out + ".nsys-rep", "name it .sqlite"},
           {fixture("not_a_trace.txt"), out, "is not an SQLite file"},
           {temp_path("scrub", "missing.sqlite"), out, "no such file"},
           {view, out, "is a view, where nsys writes a table"},
           {other, out, "is not an Nsight Systems export with CUDA or NVTX data"},
       }) {
    SCOPED_TRACE(c.in + " -> " + c.out);
    fs::remove(out);
    const auto r = run_shell(kLaptime + " scrub '" + c.in + "' '" + c.out + "' 2>&1");
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.out, HasSubstr(c.says));
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(out)) << "nothing is left behind";
  }
  EXPECT_EQ(read_file(in).substr(0, 15), "SQLite format 3");
}

}  // namespace
}  // namespace laptime::trace
