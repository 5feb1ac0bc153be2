#include "trace/read/nsys_export.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/output_file.h"
#include "trace/analyses/roofline.h"
#include "trace/model/text.h"
#include "trace/model/error.h"

extern char** environ;

namespace laptime::trace {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The first executable regular file named `name` in $PATH, "" when there is none.
std::string find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::stringstream dirs(env ? env : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

// The file's modification time, or nullopt-like {-1, 0} when it is missing or not regular.
struct timespec regular_mtime(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {-1, 0};
  return st.st_mtim;
}

bool not_older(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
}

// The last non-empty line nsys wrote (progress bars redraw with '\r'), at most 300 characters.
std::string last_line(const std::string& log) {
  std::ifstream f(log, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t begin = text.find_last_of("\r\n", end);
  std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return escape_name(line);
}

// Runs `nsys export --type sqlite --output OUT REPORT`, its standard output and error in LOG
// (standard output is the report's). Returns "" on success, else why not, for a sentence.
std::string run_nsys_export(const std::string& nsys, const std::string& report, const std::string& out,
                            const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> args{nsys, "export", "--type", "sqlite", "--output", out, report};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, nsys.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::string("could not start ") + nsys + ": " + std::strerror(spawned);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return std::string("could not wait for nsys: ") + std::strerror(errno);
  const std::string said = last_line(log);
  if (WIFSIGNALED(status)) return "nsys was killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0)
    return "nsys exited with status " + std::to_string(WEXITSTATUS(status)) + (said.empty() ? "" : ", saying: " + said);
  if (regular_mtime(out).tv_sec < 0) return "nsys exited with status 0 but wrote no " + base_name(out);
  return "";
}

// A new folder from TEMPLATE (ending XXXXXX), "" when it cannot be made.
std::string make_folder(std::string templ) {
  return mkdtemp(templ.data()) ? templ : std::string();
}

void remove_folder(const std::string& folder) {
  std::error_code ignored;
  if (!folder.empty()) std::filesystem::remove_all(folder, ignored);
}

}  // namespace

bool is_nsys_report(const std::string& path) { return ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"); }

std::string export_path_for(const std::string& report) {
  const size_t dot = report.rfind('.');
  return report.substr(0, dot) + ".sqlite";
}

TraceSource::TraceSource(TraceSource&& other) noexcept
    : path_(std::move(other.path_)), temp_folder_(std::move(other.temp_folder_)) {
  other.temp_folder_.clear();
}

TraceSource::~TraceSource() { remove_folder(temp_folder_); }

TraceSource open_trace_source(const std::string& path, std::FILE* notes) {
  const struct timespec report_time = regular_mtime(path);
  if (!is_nsys_report(path) || report_time.tv_sec < 0) return TraceSource(path);
  const std::string cache = export_path_for(path);
  const struct timespec cache_time = regular_mtime(cache);
  const bool stale = cache_time.tv_sec >= 0 && !not_older(cache_time, report_time);
  if (cache_time.tv_sec >= 0 && !stale) {
    std::fprintf(notes, "laptime: reading %s, the SQLite export beside %s (not older than the report).\n",
                 escape_name(cache).c_str(), escape_name(path).c_str());
    return TraceSource(cache);
  }
  const std::string nsys = find_on_path("nsys");
  if (nsys.empty()) {
    const std::string command =
        std::string("nsys export --type sqlite ") + (stale ? "--force-overwrite true " : "") + "-o " + cache + " " + path;
    throw TraceError(path + " is an Nsight Systems report and nsys is not on PATH to export it" +
                     (stale ? " (" + cache + " beside it is older than the report)" : "") + ": run `" + command +
                     "` and analyze " + cache + ".");
  }

  // Beside the report when R.sqlite may be written there (core/output_file's rules), else a
  // temporary folder. Either way nsys writes into a folder of our own, so nothing half-written
  // ever sits at R.sqlite.
  std::string why_not_beside;
  try {
    check_outputs({{"SQLite export", cache}}, {path});
  } catch (const OutputError& e) {
    why_not_beside = e.what();
  }
  std::string folder;
  if (why_not_beside.empty()) {
    folder = make_folder(folder_of(cache) + "/." + base_name(cache) + ".laptime-export-XXXXXX");
    if (folder.empty()) why_not_beside = "cannot make a folder beside it: " + std::string(std::strerror(errno)) + ".";
  }
  const bool beside = why_not_beside.empty();
  if (!beside) {
    const char* tmp = std::getenv("TMPDIR");
    folder = make_folder(std::string(tmp && *tmp ? tmp : "/tmp") + "/laptime-export-XXXXXX");
    if (folder.empty())
      throw TraceError("cannot export " + path + ": no temporary folder could be made (" + std::strerror(errno) + ").");
  }
  if (!why_not_beside.empty() && why_not_beside.back() == '.') why_not_beside.pop_back();
  const std::string out = folder + "/" + base_name(cache);
  if (beside)
    std::fprintf(notes, "laptime: exporting %s with `nsys export --type sqlite` to %s, kept for later runs%s.\n",
                 escape_name(path).c_str(), escape_name(cache).c_str(),
                 stale ? " (the one there was older than the report)" : "");
  else
    std::fprintf(notes, "laptime: exporting %s with `nsys export --type sqlite` to a temporary file, removed when done (%s).\n",
                 escape_name(path).c_str(), escape_name(why_not_beside).c_str());
  std::fflush(notes);

  TraceSource source(out);
  source.temp_folder_ = folder;  // removed on any failure below, and after the run when temporary
  const std::string failed = run_nsys_export(nsys, path, out, folder + "/nsys-export.log");
  if (!failed.empty()) throw TraceError("cannot export " + path + " to SQLite: " + failed + ".");
  if (!beside) {
    // `laptime diff` looks for the bench's layer costs beside the file it reads.
    const std::string costs = layer_costs_path(path);
    std::error_code ec;
    if (regular_mtime(costs).tv_sec >= 0)
      std::filesystem::create_symlink(std::filesystem::absolute(costs, ec), layer_costs_path(out), ec);
    return source;
  }
  if (std::rename(out.c_str(), cache.c_str()) != 0)
    return source;  // read it where it is (removed after the run); the next run exports again
  source.path_ = cache;
  remove_folder(folder);
  source.temp_folder_.clear();
  return source;
}

}  // namespace laptime::trace
