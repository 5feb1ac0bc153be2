// core/output_file: the one way laptime writes a file. Host only; each test works in a fresh
// folder of its own and checks the file system afterwards, not only the exception.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/output_file.h"

namespace laptime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("laptime-output-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  static void put(const std::string& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }
  // Every entry of the folder: no temporary may be left behind.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // The OutputError message of f(), or "" when none is thrown.
  template <class F>
  static std::string error_of(F f) {
    try {
      f();
    } catch (const OutputError& e) {
      return e.what();
    }
    return "";
  }

  // In a child process (EXPECT_EXIT): 0 when a write beyond RLIMIT_FSIZE is an OutputError
  // naming `out` (not the temporary) and nothing is left in the folder.
  int write_past_a_size_limit(const std::string& out) const {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message;
    try {
      OutputFile f({"JSON report", out});
      f.write(std::string(10000, 'x'));
      f.commit();
    } catch (const OutputError& e) {
      message = e.what();
    }
    const bool names_path = message.rfind("cannot write the JSON report to " + out + ": ", 0) == 0 &&
                            message.find(".laptime-") == std::string::npos;
    if (!names_path) std::fprintf(stderr, "message: %s\n", message.c_str());
    return names_path && !fs::exists(out) && entries().empty() ? 0 : 1;
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, WritesThroughATemporaryAndRenames) {
  const std::string out = path("report.json");
  {
    OutputFile f({"JSON report", out});
    EXPECT_EQ(f.temp_path(), temporary_for(out, ::getpid()));
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_FALSE(fs::exists(out)) << "nothing at the target before commit";
    f.write("{\"a\": ");
    f.write("1}\n");
    f.commit();
  }
  EXPECT_EQ(read(out), "{\"a\": 1}\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
}

TEST_F(OutputFileTest, TemporaryNameIsRecognisable) {
  EXPECT_EQ(temporary_for("/a/b/x.json", 1234), "/a/b/.x.json.laptime-1234.tmp");
  EXPECT_EQ(temporary_for("x.json", 7), ".x.json.laptime-7.tmp");
}

TEST_F(OutputFileTest, UncommittedLeavesTheOldFileAndNoTemporary) {
  const std::string out = path("logits.bin");
  put(out, "old");
  {
    OutputFile f({"logits", out});
    f.write("new and half");
  }  // an exception between open and commit ends here
  EXPECT_EQ(read(out), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"logits.bin"});
}

TEST_F(OutputFileTest, OverwriteKeepsTheFileMode) {
  const std::string out = path("r.json");
  put(out, "old");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  OutputFile f({"JSON report", out});
  f.write("new");
  f.commit();
  EXPECT_EQ(read(out), "new");
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(OutputFileTest, RefusesTheInputItself) {
  const std::string in = path("T.sqlite");
  put(in, "the trace");
  EXPECT_EQ(error_of([&] {
              OutputFile f({"JSON report", in}, {in});
            }),
            "refusing to write the JSON report to " + in + ": it is the same file as the input " + in + ".");
  EXPECT_EQ(read(in), "the trace");
  EXPECT_EQ(entries(), std::vector<std::string>{"T.sqlite"});
}

TEST_F(OutputFileTest, RefusesALinkToTheInput) {
  const std::string in = path("w.safetensors");
  put(in, "weights");
  fs::create_symlink(in, path("sym"));
  fs::create_hard_link(in, path("hard"));
  // The same file under other names, and the input given through a link.
  EXPECT_THAT(error_of([&] { OutputFile f({"trace", path("sym")}, {in}); }), HasSubstr("same file as the input"));
  EXPECT_THAT(error_of([&] { OutputFile f({"trace", path("hard")}, {in}); }), HasSubstr("same file as the input"));
  EXPECT_THAT(error_of([&] { OutputFile f({"trace", in}, {path("sym")}); }), HasSubstr("same file as the input"));
  EXPECT_EQ(read(in), "weights");
  EXPECT_TRUE(fs::is_symlink(path("sym")));
}

TEST_F(OutputFileTest, AnotherFileInTheInputsFolderIsFine) {
  const std::string in = path("T.sqlite");
  put(in, "the trace");
  OutputFile f({"JSON report", path("T.json")}, {in, "", path("missing")});
  f.write("{}");
  f.commit();
  EXPECT_EQ(read(path("T.json")), "{}");
}

// A link at the output path is the output: it is replaced by the new file, and what it points
// to is never written (before: laptime resolved the link and renamed onto its target).
TEST_F(OutputFileTest, ALinkIsReplacedNeverWrittenThrough) {
  put(path("real.json"), "old");
  fs::create_symlink(path("real.json"), path("link.json"));
  fs::create_symlink("missing.json", path("dangling.json"));
  fs::create_symlink("loop.json", path("loop.json"));
  fs::create_symlink("/dev/null", path("null.json"));
  for (const char* name : {"link.json", "dangling.json", "loop.json", "null.json"}) {
    OutputFile f({"JSON report", path(name)});
    f.write(std::string("new ") + name);
    f.commit();
    EXPECT_FALSE(fs::is_symlink(path(name))) << name;
    EXPECT_EQ(read(path(name)), std::string("new ") + name);
  }
  EXPECT_EQ(read(path("real.json")), "old");
  EXPECT_FALSE(fs::exists(path("missing.json")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(entries(), (std::vector<std::string>{"dangling.json", "link.json", "loop.json", "null.json", "real.json"}));
}

// The case: another user plants a link in a sticky world-writable folder (/tmp) at the
// name laptime will write, pointing at a file of the victim's. The victim's file is untouched;
// the link is replaced where the folder allows it (as root, or the link's owner), else the
// write fails with the OS's reason (the sticky bit), still without touching the target.
TEST_F(OutputFileTest, ALinkPlantedInASharedFolderNeverReachesItsTarget) {
  const std::string shared = path("shared");
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  put(path("victim.txt"), "the victim's file");
  const std::string planted = shared + "/report.json";
  fs::create_symlink(path("victim.txt"), planted);
  if (::geteuid() == 0) {
    ASSERT_EQ(::lchown(planted.c_str(), 65534, 65534), 0);  // owned by "nobody"
  }
  std::string error;
  try {
    OutputFile f({"JSON report", planted});
    f.write("{}");
    f.commit();
  } catch (const OutputError& e) {
    error = e.what();
  }
  EXPECT_EQ(read(path("victim.txt")), "the victim's file");
  if (error.empty()) {
    EXPECT_FALSE(fs::is_symlink(planted));
    EXPECT_EQ(read(planted), "{}");
  } else {
    EXPECT_THAT(error, HasSubstr("cannot write the JSON report to " + planted + ": "));
  }
  for (const auto& e : fs::directory_iterator(shared))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr(".laptime-"))) << "no temporary left";
}

TEST_F(OutputFileTest, ALinkAndItsTargetAreTwoOutputs) {
  put(path("a"), "x");
  fs::create_symlink(path("a"), path("link"));
  fs::create_directory(path("d"));
  EXPECT_EQ(error_of([&] { check_outputs({{"JSON report", path("a")}, {"SVG timeline", path("link")}}, {}); }), "");
  EXPECT_THAT(error_of([&] {
                check_outputs({{"JSON report", path("a")}, {"SVG timeline", path("d/../a")}}, {});
              }),
              HasSubstr("would both be written"));
  EXPECT_THAT(error_of([&] {
                check_outputs({{"JSON report", "r.json"}, {"SVG timeline", "./r.json"}}, {});
              }),
              HasSubstr("would both be written"));
}

TEST_F(OutputFileTest, NeverReplacesWhatIsNotARegularFile) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_directory(path("folder"));
  EXPECT_EQ(
      error_of([&] {
        OutputFile f({"SVG timeline", path("fifo")});
      }),
      "refusing to write the SVG timeline to " + path("fifo") + ": it is a FIFO (named pipe), not a regular file.");
  EXPECT_EQ(error_of([&] {
              OutputFile f({"SVG timeline", path("folder")});
            }),
            "refusing to write the SVG timeline to " + path("folder") + ": it is a folder, not a regular file.");
  for (const char* device : {"/dev/null", "/dev/full"}) {
    EXPECT_EQ(error_of([&] {
                OutputFile f({"JSON report", device});
              }),
              std::string("refusing to write the JSON report to ") + device +
                  ": it is a character device, not a regular file.");
  }
  EXPECT_TRUE(fs::is_fifo(path("fifo")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(entries(), (std::vector<std::string>{"fifo", "folder"}));
}

TEST_F(OutputFileTest, BadFoldersAreNamed) {
  EXPECT_EQ(
      error_of([&] {
        OutputFile f({"JSON report", path("nodir/r.json")});
      }),
      "cannot write the JSON report to " + path("nodir/r.json") + ": folder " + path("nodir") + " does not exist.");
  put(path("plain"), "x");
  EXPECT_EQ(error_of([&] {
              OutputFile f({"JSON report", path("plain/r.json")});
            }),
            "cannot write the JSON report to " + path("plain/r.json") + ": " + path("plain") + " is not a folder.");
}

TEST_F(OutputFileTest, ReadOnlyFolderIsNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes in any folder: the read-only case cannot be seen";
  fs::create_directory(path("ro"));
  fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THAT(error_of([&] {
                OutputFile f({"JSON report", path("ro/r.json")});
              }),
              HasSubstr("folder " + path("ro") + " is not writable"));
}

TEST_F(OutputFileTest, CheckOutputsComparesOutputsWithEachOther) {
  const std::string in = path("T.sqlite");
  put(in, "t");
  EXPECT_EQ(error_of([&] {
              check_outputs({{"JSON report", path("a")}, {"SVG timeline", path("a")}}, {in});
            }),
            "the JSON report and the SVG timeline would both be written to " + path("a") + ": give each its own file.");
  EXPECT_THAT(error_of([&] {
                check_outputs({{"JSON report", path("a")}, {"SVG timeline", path("./a")}}, {});
              }),
              HasSubstr("would both be written"));
  EXPECT_THAT(error_of([&] {
                check_outputs({{"JSON report", "-", true}, {"trace", "-", true}}, {});
              }),
              HasSubstr("would both be written to -"));
  EXPECT_THAT(error_of([&] {
                check_outputs({{"JSON report", path("a")}, {"Perfetto trace", ""}, {"SVG", in}}, {in});
              }),
              HasSubstr("same file as the input"));
  EXPECT_EQ(error_of([&] {
              check_outputs({{"JSON report", path("a")}, {"Perfetto trace", ""}, {"SVG", path("b")}}, {in});
            }),
            "");
  EXPECT_EQ(entries(), std::vector<std::string>{"T.sqlite"}) << "checking creates nothing";
}

TEST_F(OutputFileTest, StandardOutputOnlyWhereAllowed) {
  EXPECT_EQ(error_of([&] {
              OutputFile f({"logits", "-"});
            }),
            "the logits cannot go to standard output ('-'): give a file name.");
  EXPECT_EQ(error_of([&] { check_outputs({{"JSON report", "-", true}}, {}); }), "");
}

// "-": the file alone on standard output, what else is printed on standard error.
TEST_F(OutputFileTest, StandardOutputCarriesOnlyTheFile) {
  const std::string out = path("stdout.txt"), err = path("stderr.txt");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    try {
      OutputFile f({"JSON report", "-", true});
      std::printf("the human report\n");
      std::fflush(stdout);
      f.write("{\"json\": 1}\n");
      f.commit();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read(out), "{\"json\": 1}\n");
  EXPECT_EQ(read(err), "the human report\n");
}

// A write that fails midway (here: the file size limit, as a full disk would) is an error that
// names the user's path, not the temporary, and leaves neither a partial target nor a temporary.
TEST_F(OutputFileTest, AFailedWriteNamesThePathAndLeavesNothing) {
  const std::string out = path("big.json");
  EXPECT_EXIT(std::exit(write_past_a_size_limit(out)), ::testing::ExitedWithCode(0), "");
}

TEST_F(OutputFileTest, StaleTemporariesOfDeadRunsAreRemoved) {
  const std::string out = path("r.json");
  // A pid that is certainly gone: a child that has exited and been reaped.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const pid_t alive = ::getppid();
  put(temporary_for(out, dead), "half");
  put(temporary_for(out, alive), "another run, still going");
  put(temporary_for(path("other.json"), dead), "not this target's");
  put(path(".r.json.laptime-x1.tmp"), "not a pid");
  EXPECT_EQ(remove_stale_temporaries(out), 1);
  EXPECT_FALSE(fs::exists(temporary_for(out, dead)));
  EXPECT_TRUE(fs::exists(temporary_for(out, alive)));
  EXPECT_TRUE(fs::exists(temporary_for(path("other.json"), dead)));
  EXPECT_TRUE(fs::exists(path(".r.json.laptime-x1.tmp")));
  // Opening the output cleans up too.
  put(temporary_for(out, dead), "half again");
  OutputFile f({"JSON report", out});
  f.write("{}");
  f.commit();
  EXPECT_FALSE(fs::exists(temporary_for(out, dead)));
}

// NAME_MAX is the limit of one name (255 bytes here); the temporary adds ".", ".laptime-PID.tmp".
// A name that fits is written, through a shortened temporary when the full one would not fit;
// two long names with one prefix never share a temporary; a name past the limit is refused
// before any work (before: "File name too long" at the write, after the whole run).
TEST_F(OutputFileTest, NamesNearTheFileNameLimit) {
  const long limit = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  ASSERT_GT(limit, 40);
  const std::string stem(static_cast<size_t>(limit) - 5, 'n');
  const std::string a = path(stem + ".json"), b = path(stem + ".svgx");
  ASSERT_EQ(fs::path(a).filename().string().size(), static_cast<size_t>(limit));
  {
    OutputFile fa({"JSON report", a}), fb({"SVG timeline", b});
    EXPECT_LE(fs::path(fa.temp_path()).filename().string().size(), static_cast<size_t>(limit));
    EXPECT_NE(fa.temp_path(), fb.temp_path());
    EXPECT_EQ(fa.temp_path(), temporary_for(a, ::getpid()));
    // The same name convert.py gives it (tests/python/test_convert.py): FNV-1a 64 of the name.
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : fs::path(a).filename().string()) h = (h ^ c) * 0x100000001b3ull;
    char tail[64];
    std::snprintf(tail, sizeof tail, "~%016llx.laptime-%ld.tmp", static_cast<unsigned long long>(h),
                  static_cast<long>(::getpid()));
    EXPECT_THAT(fa.temp_path(), ::testing::EndsWith(tail));
    fa.write("json");
    fb.write("svg");
    fa.commit();
    fb.commit();
  }
  EXPECT_EQ(read(a), "json");
  EXPECT_EQ(read(b), "svg");
  // Stale temporaries of a long name are found by the shortened name too.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  put(temporary_for(a, dead), "half");
  EXPECT_EQ(remove_stale_temporaries(a), 1);
  // A multi-byte character is never cut in half.
  const std::string wide = path(std::string(static_cast<size_t>(limit) - 20, 'w') + "\xc3\xa9\xc3\xa9\xc3\xa9.json");
  if (fs::path(wide).filename().string().size() <= static_cast<size_t>(limit)) {
    const std::string t = fs::path(temporary_for(wide, 4194304)).filename().string();
    EXPECT_LE(t.size(), static_cast<size_t>(limit));
    const size_t tilde = t.rfind('~');
    ASSERT_NE(tilde, std::string::npos);
    EXPECT_NE(static_cast<unsigned char>(t[tilde - 1]), 0xc3) << "a character cut in half";
  }
  const std::string over = path(std::string(static_cast<size_t>(limit) + 1, 'o'));
  EXPECT_EQ(error_of([&] {
              check_outputs({{"JSON report", over}}, {});
            }),
            "cannot write the JSON report to " + over + ": its file name is " + std::to_string(limit + 1) +
                " bytes long, over the folder's limit of " + std::to_string(limit) + ".");
  EXPECT_EQ(entries(), (std::vector<std::string>{stem + ".json", stem + ".svgx"}));
}

TEST_F(OutputFileTest, APathThatNamesAFolderIsRefused) {
  EXPECT_EQ(error_of([&] {
              check_outputs({{"JSON report", path("nodir/")}}, {});
            }),
            "cannot write the JSON report to " + path("nodir/") + ": it names a folder, not a file.");
  EXPECT_EQ(error_of([&] {
              check_outputs({{"JSON report", dir_.string() + "/"}}, {});
            }),
            "refusing to write the JSON report to " + dir_.string() + "/: it is a folder, not a regular file.");
  EXPECT_THAT(error_of([&] { check_outputs({{"JSON report", path("x/..")}}, {}); }), HasSubstr("names a folder"));
}

// `laptime analyze T --json r.json >&-`: with descriptor 1 closed, the temporary would get it
// and the text report would be written into the JSON file. reserve_standard_descriptors()
// (main() calls it first) holds 0-2 on /dev/null in the wrong mode, so the report's write
// fails (and is reported) while the JSON file holds the JSON alone.
TEST_F(OutputFileTest, AClosedStandardOutputNeverBecomesAnOutput) {
  const std::string out = path("r.json");
  for (const bool reserve : {true, false}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(STDOUT_FILENO);
      if (reserve) reserve_standard_descriptors();
      int code = 0;
      try {
        OutputFile f({"JSON report", out});
        std::printf("the human report\n");
        if (std::fflush(stdout) == 0) code |= 4;  // the report must not be written anywhere
        f.write("{\"json\": 1}\n");
        f.commit();
      } catch (...) {
        code |= 2;
      }
      if (reserve && ::fcntl(STDOUT_FILENO, F_GETFD) == -1) code |= 8;  // held, not closed
      ::_exit(code);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << (reserve ? "reserved" : "not reserved: the temporary moved above 2");
    EXPECT_EQ(read(out), "{\"json\": 1}\n");
    fs::remove(out);
  }
}

TEST_F(OutputFileTest, NonRegularKind) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  put(path("file"), "x");
  EXPECT_EQ(non_regular_kind(path("fifo")), "a FIFO (named pipe)");
  EXPECT_EQ(non_regular_kind(dir_.string()), "a folder");
  EXPECT_EQ(non_regular_kind("/dev/null"), "a character device");
  EXPECT_EQ(non_regular_kind(path("file")), "");
  EXPECT_EQ(non_regular_kind(path("missing")), "");
}

TEST_F(OutputFileTest, CommitTwiceIsAnError) {
  OutputFile f({"JSON report", path("r.json")});
  f.commit();
  EXPECT_THAT(error_of([&] { f.commit(); }), HasSubstr("already closed"));
  EXPECT_THAT(error_of([&] { f.write("x"); }), Not(HasSubstr(".laptime-")));
}

}  // namespace
}  // namespace laptime
