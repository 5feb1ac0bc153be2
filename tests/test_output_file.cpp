// core/output_file: the one way laptime writes a file. Host only; each test works in a fresh
// folder of its own and checks the file system afterwards, not only the exception. The rules for
// one output are cases in tests/fixtures/output_rules.json (OutputRules below), the table
// weights/convert.py is held to as well; the tests here before it are laptime's alone
// (standard output, several outputs, the API).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
// Two names at the limit with one long prefix are written side by side, through shortened
// temporaries that differ (the names themselves: the table's temporaries), and a stale
// temporary of a long name is found by its shortened name too.
TEST_F(OutputFileTest, LongNamesSharingAPrefixNeverShareATemporary) {
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
    fa.write("json");
    fb.write("svg");
    fa.commit();
    fb.commit();
  }
  EXPECT_EQ(read(a), "json");
  EXPECT_EQ(read(b), "svg");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  put(temporary_for(a, dead), "half");
  EXPECT_EQ(remove_stale_temporaries(a), 1);
  EXPECT_EQ(entries(), (std::vector<std::string>{stem + ".json", stem + ".svgx"}));
}

// `laptime analyze T --json r.json >&-`: with descriptor 1 closed, an output's temporary would
// get it and the text report would be written into the JSON file. reserve_standard_descriptors()
// (main() calls it first) holds 0-2 on /dev/null in the mode that makes every use fail. What the
// output then holds is the table's (a_closed_standard_output_never_becomes_the_output); here the
// descriptors themselves: open again, and unusable.
TEST_F(OutputFileTest, ReservedDescriptorsAreHeldAndUnusable) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int fd = 0; fd <= 2; ++fd) ::close(fd);
    reserve_standard_descriptors();
    int code = 0;
    for (int fd = 0; fd <= 2; ++fd)
      if (::fcntl(fd, F_GETFD) == -1) code |= 1 << fd;  // held, not closed
    char c = 'x';
    if (::read(STDIN_FILENO, &c, 1) != -1 || errno != EBADF) code |= 8;
    if (::write(STDOUT_FILENO, &c, 1) != -1 || errno != EBADF) code |= 16;
    if (::write(STDERR_FILENO, &c, 1) != -1 || errno != EBADF) code |= 32;
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
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

// --- the table: the rules for one output, which weights/convert.py is held to as well ------------
// tests/fixtures/output_rules.json says what each case sets up, what it expects and how to read
// it; tests/python/test_output_rules.py runs the same cases through convert.py.

using json = nlohmann::json;

const json& rules_table() {
  static const json table = [] {
    const char* env = std::getenv("LAPTIME_SOURCE_DIR");
    std::ifstream in(std::string(env && *env ? env : LAPTIME_SOURCE_DIR) + "/tests/fixtures/output_rules.json");
    return json::parse(in, nullptr, /*allow_exceptions=*/false);
  }();
  return table;
}

std::vector<std::string> rule_ids() {
  const json& table = rules_table();
  if (table.is_discarded() || !table.contains("cases")) return {"the_table_cannot_be_read"};
  std::vector<std::string> ids;
  for (const json& c : table["cases"]) ids.push_back(c.value("id", "a_case_without_an_id"));
  return ids;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

class OutputRules : public OutputFileTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // A name in the case's folder, or an absolute path as it is.
  std::string at(const std::string& name) const { return !name.empty() && name[0] == '/' ? name : path(name); }

  // What an entry of the folder is and holds, to compare before and after.
  static std::string describe(const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return "missing";
    const std::string mode = std::to_string(st.st_mode & 07777);
    if (S_ISLNK(st.st_mode)) return "link to " + fs::read_symlink(p).string();
    if (S_ISREG(st.st_mode)) return "file " + mode + ": " + read(p.string());
    if (S_ISDIR(st.st_mode)) return "folder " + mode;
    if (S_ISFIFO(st.st_mode)) return "fifo";
    if (S_ISSOCK(st.st_mode)) return "socket";
    if (S_ISCHR(st.st_mode)) return "character device";
    return "other";
  }
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> entries;
    for (const auto& e : fs::directory_iterator(dir_)) entries[e.path().filename().string()] = describe(e.path());
    return entries;
  }

  // Makes one entry of the case's setup; a temporary's label is mapped to its file's name.
  void make(const json& e, pid_t dead, std::map<std::string, std::string>& labels) {
    const std::string name = e.at("name"), is = e.at("is"), p = path(name);
    const auto mode = [&] {
      if (e.contains("mode"))
        fs::permissions(p, static_cast<fs::perms>(std::stoi(e["mode"].get<std::string>(), nullptr, 8)));
    };
    if (is == "file") {
      put(p, e.value("holds", ""));
      mode();
    } else if (is == "symlink") {
      fs::create_symlink(e.at("to").get<std::string>(), p);
    } else if (is == "hardlink") {
      fs::create_hard_link(at(e.at("to")), p);
    } else if (is == "link_loop") {
      fs::create_symlink(name, p);
    } else if (is == "fifo") {
      ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    } else if (is == "socket") {
      const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      ASSERT_LT(p.size(), sizeof addr.sun_path);
      std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
      ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
      ::close(s);
    } else if (is == "folder") {
      fs::create_directory(p);
      mode();
      folders_.push_back(p);
    } else if (is == "temporary") {
      const pid_t pid = e.at("pid") == "dead" ? dead : ::getppid();
      const std::string file = temporary_for(path(e.at("of")), pid);
      put(file, "half");
      labels[name] = fs::path(file).filename().string();
    } else {
      ADD_FAILURE() << "a setup entry the harness does not know: " << e.dump();
    }
  }

  // Opens the output, writes `bytes` and commits, as a command does: "" when it is written,
  // else the sentence. With a line for standard output, that line is written between the open
  // and the write, and must fail.
  static std::string attempt(const OutputSpec& spec, const std::vector<std::string>& inputs, const std::string& bytes,
                             bool line_between) {
    try {
      OutputFile f(spec, inputs);
      if (line_between) {
        std::printf("the human report\n");
        if (std::fflush(stdout) == 0) return "the line for standard output was written somewhere";
      }
      f.write(bytes);
      f.commit();
    } catch (const OutputError& e) {
      return e.what();
    }
    return "";
  }

  // attempt() in a child process under the case's fault; the sentence comes back through a pipe.
  static std::string attempt_under(const std::string& fault, const OutputSpec& spec,
                                   const std::vector<std::string>& inputs, const std::string& bytes) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return "no pipe";
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(pipe_fds[0]);
      if (fault == "file-size-limit") {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
      } else if (fault == "standard-output-closed") {
        ::close(STDOUT_FILENO);
        reserve_standard_descriptors();
      } else if (fault == "standard-input-and-output-closed-unreserved") {
        ::close(STDIN_FILENO);
        ::close(STDOUT_FILENO);
      } else {
        ::_exit(3);  // a fault the harness does not know
      }
      const std::string message = attempt(spec, inputs, bytes, fault != "file-size-limit");
      const bool sent = ::write(pipe_fds[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
      ::_exit(sent ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
      message.append(buffer, static_cast<size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the child process failed";
    return message;
  }

  void TearDown() override {
    for (const std::string& f : folders_) fs::permissions(f, fs::perms::owner_all);
    OutputFileTest::TearDown();
  }

  std::vector<std::string> folders_;
};

TEST_P(OutputRules, Holds) {
  const json& table = rules_table();
  ASSERT_FALSE(table.is_discarded()) << "tests/fixtures/output_rules.json cannot be read as JSON";
  const json* found = nullptr;
  for (const json& c : table["cases"])
    if (c.value("id", "") == GetParam()) found = &c;
  ASSERT_NE(found, nullptr);
  const json& c = *found;
  if (c.value("not_as_root", false) && ::geteuid() == 0) GTEST_SKIP() << "root writes and searches any folder";

  const pid_t dead = ::fork();  // a process that is certainly gone: exited and reaped
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::map<std::string, std::string> labels;
  for (const json& e : c.value("setup", json::array())) make(e, dead, labels);

  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  std::string out;
  if (c.contains("output_name_bytes")) {
    const std::string bytes = c["output_name_bytes"];
    ASSERT_TRUE(bytes == "NAME_MAX" || bytes == "NAME_MAX+1") << bytes;
    out = path(std::string(static_cast<size_t>(name_max + (bytes == "NAME_MAX+1")), 'n'));
  } else {
    out = at(c.at("output"));
  }
  std::vector<std::string> inputs;
  for (const json& in : c.value("inputs", json::array())) inputs.push_back(at(in));
  const std::string what = table.at("what");
  std::string sentence = c.value("sentence", "");
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"{what}", what},
                                                        {"{output}", out},
                                                        {"{dir}", dir_.string()},
                                                        {"{NAME_MAX+1}", std::to_string(name_max + 1)},
                                                        {"{NAME_MAX}", std::to_string(name_max)}})
    sentence = replace_all(sentence, from, to);
  const std::string said = sentence.empty() ? "" : sentence + ".";  // laptime ends its sentences

  std::mt19937 rng(std::random_device{}());
  const std::string fault = c.value("fault", "");
  std::string bytes(fault == "file-size-limit" ? 10000 : 1 + rng() % 4000, '\0');
  for (char& b : bytes) b = static_cast<char>(rng());

  const auto before = snapshot();
  const std::string out_before = describe(out);
  const OutputSpec spec{what, out};
  const std::string checked = error_of([&] { check_outputs({spec}, inputs); });
  const std::string written =
      fault.empty() ? attempt(spec, inputs, bytes, false) : attempt_under(fault, spec, inputs, bytes);
  const std::string outcome = c.at("outcome");
  if (outcome == "refused") {
    EXPECT_EQ(checked, said) << "check_outputs";
    EXPECT_EQ(written, said) << "OutputFile";
  } else if (outcome == "failed") {
    EXPECT_EQ(checked, "") << "check_outputs";
    EXPECT_EQ(written, said) << "OutputFile";
  } else {
    ASSERT_EQ(outcome, "written");
    EXPECT_EQ(checked, "") << "check_outputs";
    EXPECT_EQ(written, "") << "OutputFile";
  }

  // Everything else as it was, less what the case removes, and no temporary left.
  auto expected = before, after = snapshot();
  for (const json& gone : c.value("removed", json::array())) {
    const std::string label = gone;
    expected.erase(labels.count(label) ? labels[label] : label);
  }
  const bool in_dir = fs::path(out).parent_path() == dir_;
  const std::string entry = fs::path(out).filename().string();
  if (outcome == "written") {
    ASSERT_TRUE(in_dir);
    struct stat st {};
    ASSERT_EQ(::lstat(out.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << describe(out);
    EXPECT_TRUE(read(out) == bytes) << "the output holds exactly the bytes written";
    if (c.contains("keeps_mode")) {
      EXPECT_EQ(st.st_mode & 07777, static_cast<mode_t>(std::stoi(c["keeps_mode"].get<std::string>(), nullptr, 8)));
    }
    expected.erase(entry);
    after.erase(entry);
  } else {
    EXPECT_EQ(describe(out), out_before) << "the output untouched";
  }
  EXPECT_EQ(after, expected);
}

INSTANTIATE_TEST_SUITE_P(Table, OutputRules, ::testing::ValuesIn(rule_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The temporary's name, cut and hashed near the folder's limit: the same names convert.py gives.
TEST(OutputRulesTable, TemporaryNames) {
  const json& table = rules_table();
  ASSERT_FALSE(table.is_discarded());
  ASSERT_FALSE(table.value("temporaries", json::array()).empty());
  for (const json& t : table["temporaries"]) {
    const std::string name = t.at("name"), want = t.at("temporary");
    const std::string got = temporary_name(name, t.at("name_max").get<long>(), t.at("pid").get<long>());
    EXPECT_EQ(got, want) << name;
    EXPECT_LE(got.size(), t.at("name_max").get<size_t>()) << name;
  }
}

}  // namespace
}  // namespace laptime
