// What the trace/ test suites share: where the fixtures are, temporaries, a file's bytes, the
// sentence a TraceError carries, and a report as text. LAPTIME_SOURCE_DIR (set by CTest, or by
// hand for a build carried to another machine) wins over the checkout the build was configured in.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/model/error.h"
#include "trace/analyses/analyze.h"
#include "trace/write/analysis_text.h"
#include "trace/model/trace.h"

namespace laptime::trace::testing_support {

inline std::string source_dir() {
  const char* env = std::getenv("LAPTIME_SOURCE_DIR");
  return env && *env ? env : LAPTIME_SOURCE_DIR;
}
inline std::string fixture(const std::string& name) { return source_dir() + "/tests/fixtures/" + name; }
// A path in GoogleTest's temporary folder, `suite` keeping the suites' files apart.
inline std::string temp_path(const std::string& suite, const std::string& name) {
  return testing::TempDir() + "laptime_" + suite + "_" + name;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The message of the TraceError that `f` throws, or "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// This process's address space now, in bytes (/proc/self/statm: pages).
inline size_t address_space() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0;
  f >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Runs `work` in a child allowed `budget` bytes of address space beyond what it starts with and
// `cpu_s` seconds of CPU. "" when it finished, else what stopped it.
inline std::string bounded(size_t budget, int cpu_s, const std::function<void()>& work) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    const rlimit as{address_space() + budget, address_space() + budget};
    const rlimit cpu{static_cast<rlim_t>(cpu_s), static_cast<rlim_t>(cpu_s)};
    setrlimit(RLIMIT_AS, &as);
    setrlimit(RLIMIT_CPU, &cpu);
    try {
      work();
    } catch (const std::bad_alloc&) {
      _exit(3);
    } catch (const TraceError&) {
      _exit(0);  // a sentence is a fine answer to a hostile trace
    } catch (...) {
      _exit(4);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) == 3) return "out of memory (bad_alloc)";
  if (WEXITSTATUS(status) != 0) return "exit " + std::to_string(WEXITSTATUS(status));
  return "";
}

// print_report's text, through an anonymous temporary file (std::tmpfile: one of its own per
// call, so tests that CTest runs side by side never share it).
// What `print` writes to a FILE*, as a string (a text report printed to memory).
inline std::string printed(const std::function<void(std::FILE*)>& print) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  print(out);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

// The words bash hands a program for the command line `line` (printed by laptime for pasting):
// the line written to a script of its own and run by bash as `printf '%s\0' LINE`, so the test
// compares argv byte for byte. A line that bash cannot parse gives the words it printed up to it.
inline std::vector<std::string> bash_words(const std::string& line) {
  char name[] = "/tmp/laptime_bash_words_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) return {"(no temporary script)"};
  const std::string script = "printf '%s\\0' " + line + "\n";
  const bool written = write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  close(fd);
  std::string out;
  if (std::FILE* p = written ? popen(("bash " + std::string(name)).c_str(), "r") : nullptr) {
    for (int c; (c = std::fgetc(p)) != EOF;) out += static_cast<char>(c);
    pclose(p);
  }
  std::remove(name);
  std::vector<std::string> words;
  for (size_t at = 0, end; (end = out.find('\0', at)) != std::string::npos; at = end + 1)
    words.push_back(out.substr(at, end - at));
  return words;
}

// The committed PyTorch profiler traces, "kineto/NAME", each with the range pattern its loop is
// (tests/fixtures/kineto/reference.expected.json's `range`; "" for the profiler's own steps).
inline std::vector<std::pair<std::string, std::string>> kineto_fixtures() {
  const nlohmann::json all = nlohmann::json::parse(read_file(fixture("kineto/reference.expected.json")));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, v] : all.items())
    out.emplace_back("kineto/" + name, v.at("range").is_null() ? "" : v.at("range").get<std::string>());
  return out;
}

// An iteration range of a loop built in a test: `text` numbered by its payload, on thread pid = tid.
inline NvtxEvent numbered_range(Name text, uint64_t number, uint32_t thread, Ns start, Ns end) {
  NvtxEvent r;
  r.text = text;
  r.has_payload = true;
  r.payload = number;
  r.pid = r.tid = thread;
  r.start = start;
  r.end = end;
  return r;
}

inline std::string report_text(const Analysis& a) {
  std::FILE* f = std::tmpfile();
  if (!f) return "(no temporary file for the report)";
  print_report(a, f);
  std::string text(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

}  // namespace laptime::trace::testing_support
