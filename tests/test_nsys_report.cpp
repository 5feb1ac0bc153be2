// `laptime analyze` and `diff` on an .nsys-rep (trace/read/nsys_export.h), through the real binary.
// The plumbing runs against a stand-in nsys on PATH (tests/support/fake-nsys/nsys: it copies a
// committed export and logs each call), so every rule is checked here without Nsight Systems:
// one export beside the report and reused, a newer report exported again, a newer export never
// overwritten, a read-only folder exported to a temporary that is removed, no nsys or a failing
// one in one sentence with nothing left behind. The last test runs the real nsys where there is
// one, on the committed graph_cases.nsys-rep, against graph_cases.sqlite exported from the same
// capture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"

namespace laptime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_support::run_shell;
using trace::testing_support::fixture;
using trace::testing_support::read_file;
using trace::testing_support::source_dir;

// The build's binary; LAPTIME_BINARY in the environment names another (a device machine runs a
// stripped copy unpacked elsewhere: scripts/dev/device-call.sh host-build sets it).
const std::string kLaptime = std::getenv("LAPTIME_BINARY") ? std::getenv("LAPTIME_BINARY") : LAPTIME_BINARY;
const std::string kReport = "graph/graph_cases.nsys-rep";  // any report: the stand-in does not read it
const std::string kExport = "synthetic_trace.sqlite";      // what the stand-in "exports"

// A fresh folder under GoogleTest's temporary folder, removed with its contents.
struct Folder {
  fs::path path;
  Folder() {
    std::string templ = ::testing::TempDir() + "laptime_nsys_report_XXXXXX";
    path = mkdtemp(templ.data());
  }
  ~Folder() {
    std::error_code ignored;  // a folder a test made read-only is made writable again first
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
    for (fs::recursive_directory_iterator it(path, ignored), end; !ignored && it != end; it.increment(ignored))
      if (it->is_directory(ignored)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(path)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
};

// The report without its first line ("laptime analyze FILE", which names the file read).
std::string body(const std::string& report) {
  const size_t nl = report.find('\n');
  return nl == std::string::npos ? "" : report.substr(nl + 1);
}

int lines_in(const std::string& path) {
  const std::string text = read_file(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The stand-in nsys first on PATH, exporting `sqlite`, logging to `log`.
std::string with_fake_nsys(const std::string& sqlite, const std::string& log, const std::string& extra = "") {
  return "env PATH=" + source_dir() + "/tests/support/fake-nsys:\"$PATH\" FAKE_NSYS_SQLITE=" + sqlite +
         " FAKE_NSYS_LOG=" + log + " " + extra + " ";
}

// analyze on the export itself, as the expectation: what the report must say after export.
std::string direct_report(const std::string& sqlite) {
  const auto r = run_shell(kLaptime + " analyze " + sqlite + " 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  return body(r.out);
}

void set_mtime(const std::string& path, time_t seconds) {
  const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(NsysReport, ExportedOnceBesideTheReportThenReused) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), rep);
  const std::string env = with_fake_nsys(fixture(kExport), log);

  auto r = run_shell(env + kLaptime + " analyze " + rep + " 2>" + (dir / "err"));
  ASSERT_EQ(r.status, 0) << read_file(dir / "err");
  EXPECT_EQ(read_file(dir / "err"), "laptime: exporting " + rep + " with `nsys export --type sqlite` to " +
                                        (dir / "run.sqlite") + ", kept for later runs.\n");
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "laptime analyze " + rep);
  EXPECT_EQ(body(r.out), direct_report(fixture(kExport)));
  EXPECT_EQ(read_file(dir / "run.sqlite"), read_file(fixture(kExport)));
  EXPECT_EQ(lines_in(log), 1);
  EXPECT_THAT(read_file(log), HasSubstr("export --type sqlite --output "));
  // Nothing but the report, its export and the stand-in's log: the private export folder is gone.
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"err", "nsys.log", "run.nsys-rep", "run.sqlite"}));

  r = run_shell(env + kLaptime + " analyze " + rep + " 2>" + (dir / "err"));
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(lines_in(log), 1) << "the second run must read the export, not run nsys again";
  EXPECT_EQ(read_file(dir / "err"), "laptime: reading " + (dir / "run.sqlite") + ", the SQLite export beside " + rep +
                                        " (not older than the report).\n");
  EXPECT_EQ(body(r.out), direct_report(fixture(kExport)));
}

TEST(NsysReport, ReportNewerThanItsExportIsExportedAgain) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log", cache = dir / "run.sqlite";
  fs::copy_file(fixture(kReport), rep);
  fs::copy_file(fixture("synthetic_one_iteration.sqlite"), cache);  // an old export of an older capture
  set_mtime(cache, 1000000000);
  const auto r = run_shell(with_fake_nsys(fixture(kExport), log) + kLaptime + " analyze " + rep + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("kept for later runs (the one there was older than the report)."));
  EXPECT_EQ(lines_in(log), 1);
  EXPECT_EQ(read_file(cache), read_file(fixture(kExport)));
}

TEST(NsysReport, ANewerExportIsReadAndNeverOverwritten) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log", cache = dir / "run.sqlite";
  fs::copy_file(fixture(kReport), rep);
  fs::copy_file(fixture("synthetic_one_iteration.sqlite"), cache);  // the user's own export
  set_mtime(rep, 1000000000);
  const auto r = run_shell(with_fake_nsys(fixture(kExport), log) + kLaptime + " analyze " + rep + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(body(r.out), direct_report(fixture("synthetic_one_iteration.sqlite")));
  EXPECT_FALSE(fs::exists(log)) << "nsys must not run when a newer export is there";
  EXPECT_EQ(read_file(cache), read_file(fixture("synthetic_one_iteration.sqlite")));
}

TEST(NsysReport, WithoutNsysOneSentenceNamesTheCommand) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep";
  fs::copy_file(fixture(kReport), rep);
  fs::create_directory(dir / "empty-path");
  auto r = run_shell("env PATH=" + (dir / "empty-path") + " " + kLaptime + " analyze " + rep + " 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "laptime: " + rep +
                       " is an Nsight Systems report and nsys is not on PATH to export it: run `nsys export "
                       "--type sqlite -o " +
                       (dir / "run.sqlite") + " " + rep + "` and analyze " + (dir / "run.sqlite") + ".\n");
  // A stale export is named, and the command overwrites it.
  fs::copy_file(fixture(kExport), dir / "run.sqlite");
  set_mtime(dir / "run.sqlite", 1000000000);
  r = run_shell("env PATH=" + (dir / "empty-path") + " " + kLaptime + " diff " + rep + " " + rep + " 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("(" + (dir / "run.sqlite") +
                               " beside it is older than the report): run `nsys export "
                               "--type sqlite --force-overwrite true -o "));
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"empty-path", "run.nsys-rep", "run.sqlite"}));
}

TEST(NsysReport, AFailingExportIsOneSentenceAndLeavesNothing) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), rep);
  const auto r = run_shell(with_fake_nsys(fixture(kExport), log, "FAKE_NSYS_FAIL='Error: the report is damaged'") +
                           kLaptime + " analyze " + rep + " 2>&1");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("laptime: cannot export " + rep +
                               " to SQLite: nsys exited with status 1, saying: Error: the report is damaged.\n"));
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"nsys.log", "run.nsys-rep"}));
}

TEST(NsysReport, ReadOnlyFolderIsExportedToATemporaryThatIsRemoved) {
  Folder dir;
  // Everything the run needs sits in the temporary folder, readable by the user it runs as.
  const std::string reports = dir / "reports", tmp = dir / "tmp", nsys_dir = dir / "bin";
  fs::create_directories(reports);
  fs::create_directories(tmp);
  fs::create_directories(nsys_dir);
  fs::copy_file(fixture(kReport), reports + "/run.nsys-rep");
  fs::copy_file(fixture(kExport), dir / "export.sqlite");
  fs::copy_file(source_dir() + "/tests/support/fake-nsys/nsys", nsys_dir + "/nsys");
  // The executable too: the checkout may sit where that user cannot go (/root). analyze needs
  // nothing beside it (the GPU module is for bench, forward and peak).
  const std::string laptime = nsys_dir + "/laptime";
  fs::copy_file(kLaptime, laptime);
  fs::permissions(dir.path, fs::perms::all);
  fs::permissions(tmp, fs::perms::all);
  fs::permissions(reports, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                               fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // root writes into a read-only folder anyway: run as nobody then, where that is possible.
  std::string as_user;
  if (geteuid() == 0) {
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups -- ";
    if (run_shell(as_user + "test -x " + laptime + " 2>&1").status != 0)
      GTEST_SKIP() << "running as root, and user nobody cannot run " << laptime << " to see a read-only folder";
  }
  const std::string rep = reports + "/run.nsys-rep";
  const auto r = run_shell(as_user + "env TMPDIR=" + tmp + " PATH=" + nsys_dir + ":/usr/bin:/bin FAKE_NSYS_SQLITE=" +
                           (dir / "export.sqlite") + " " + laptime + " analyze " + rep + " 2>" + (dir / "err"));
  ASSERT_EQ(r.status, 0) << read_file(dir / "err");
  EXPECT_THAT(read_file(dir / "err"), HasSubstr("laptime: exporting " + rep +
                                                " with `nsys export --type sqlite` to a temporary file, removed "
                                                "when done (cannot write the SQLite export to " +
                                                reports + "/run.sqlite: folder " + reports + " is not writable"));
  EXPECT_EQ(body(r.out), direct_report(fixture(kExport)));
  EXPECT_TRUE(fs::is_empty(tmp)) << "the temporary export must be removed";
  EXPECT_EQ(std::distance(fs::directory_iterator(reports), fs::directory_iterator()), 1);
}

TEST(NsysReport, DiffReadsTwoReports) {
  Folder dir;
  const std::string a = dir / "a.nsys-rep", b = dir / "b.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), a);
  fs::copy_file(fixture(kReport), b);
  const auto r = run_shell(with_fake_nsys(fixture(kExport), log) + kLaptime + " diff " + a + " " + b + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(lines_in(log), 2);
  // The same as diff on the exports, but naming the files the user gave.
  const auto direct = run_shell(kLaptime + " diff " + (dir / "a.sqlite") + " " + (dir / "b.sqlite") + " 2>/dev/null");
  ASSERT_EQ(direct.status, 0);
  std::string renamed = r.out;
  for (size_t at; (at = renamed.find(".nsys-rep")) != std::string::npos;) renamed.replace(at, 9, ".sqlite");
  EXPECT_EQ(renamed, direct.out);
  EXPECT_THAT(r.out, HasSubstr("laptime diff " + a + " " + b));
}

// An export laptime cannot read: refused, not kept as R.sqlite for every
// later run; the next run exports again.
TEST(NsysReport, AnUnreadableExportIsNotKept) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), rep);
  for (const char* garbage : {"not_a_trace.txt", "foreign.sqlite"}) {
    SCOPED_TRACE(garbage);
    const auto r = run_shell(with_fake_nsys(fixture(garbage), log) + kLaptime + " analyze " + rep + " 2>&1");
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.out, HasSubstr("laptime: cannot export " + rep + " to SQLite: nsys wrote run.sqlite, but "));
    EXPECT_THAT(r.out, HasSubstr("; it is not kept.\n"));
    EXPECT_EQ(r.out.find(".laptime-export-"), std::string::npos) << "the message names the temporary: " << r.out;
    EXPECT_EQ(dir.names(), (std::vector<std::string>{"nsys.log", "run.nsys-rep"}));
  }
  const auto good = run_shell(with_fake_nsys(fixture(kExport), log) + kLaptime + " analyze " + rep + " 2>/dev/null");
  EXPECT_EQ(good.status, 0);
  EXPECT_EQ(lines_in(log), 3) << "each run exported: no bad export was kept";
}

// A run stopped by Ctrl-C leaves its export folder (and ncu's temporary): the next export
// removes those of processes no longer alive, never a live one's.
TEST(NsysReport, FoldersOfKilledExportsAreRemoved) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), rep);
  // A pid no process has (above the kernel's pid_max), and this test's own (alive).
  const std::string dead = dir / ".run.sqlite.laptime-export-99999999-abc123";
  const std::string alive = dir / (".run.sqlite.laptime-export-" + std::to_string(getpid()) + "-abc123");
  fs::create_directories(dead);
  std::ofstream(dead + "/run.sqlite") << "half";
  fs::create_directories(alive);
  const auto r = run_shell(with_fake_nsys(fixture(kExport), log) + kLaptime + " analyze " + rep + " >/dev/null 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
}

// A report stamped in the future: exported once, then read.
TEST(NsysReport, AReportFromTheFutureIsExportedOnce) {
  Folder dir;
  const std::string rep = dir / "run.nsys-rep", log = dir / "nsys.log";
  fs::copy_file(fixture(kReport), rep);
  set_mtime(rep, time(nullptr) + 365 * 24 * 3600);
  const std::string env = with_fake_nsys(fixture(kExport), log);
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(run_shell(env + kLaptime + " analyze " + rep + " >/dev/null 2>&1").status, 0);
  EXPECT_EQ(lines_in(log), 1);
}

// The real thing, where Nsight Systems is installed: the committed report, exported by nsys,
// reads as the export committed beside it (the `source` line names the exporting nsys).
TEST(NsysReport, RealNsysExportMatchesTheCommittedExport) {
  // Through sh: run_shell prefixes `timeout`, which cannot run the `command` builtin itself (the
  // first H200 run skipped here with nsys on PATH).
  if (run_shell("sh -c 'command -v nsys' >/dev/null 2>&1").status != 0)
    GTEST_SKIP()
        << "nsys is not on PATH: the real export of graph_cases.nsys-rep is checked where Nsight Systems is installed";
  Folder dir;
  const std::string rep = dir / "graph_cases.nsys-rep";
  fs::copy_file(fixture("graph/graph_cases.nsys-rep"), rep);
  const auto r = run_shell(kLaptime + " analyze " + rep + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  auto without_source = [](std::string text) {
    const size_t at = text.find("  source ");
    if (at != std::string::npos) text.erase(at, text.find('\n', at) - at + 1);
    return text;
  };
  EXPECT_EQ(without_source(body(r.out)), without_source(direct_report(fixture("graph/graph_cases.sqlite"))));
  EXPECT_TRUE(fs::exists(dir / "graph_cases.sqlite"));
}

}  // namespace
}  // namespace laptime
