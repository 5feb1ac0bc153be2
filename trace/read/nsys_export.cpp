#include "trace/read/nsys_export.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/os.h"
#include "core/output_file.h"
#include "trace/read/sidecars.h"
#include "trace/model/text.h"
#include "trace/model/error.h"

namespace laptime::trace {
namespace {

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
  const FileDescriptor log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!log_fd.valid()) return "could not open its log " + log + ": " + std::strerror(errno);
  const ProgramExit exit =
      run_program({nsys, "export", "--type", "sqlite", "--output", out, report}, -1, log_fd.get(), log_fd.get());
  if (!exit.started) return std::string("could not start ") + nsys + ": " + exit.error;
  if (!exit.error.empty()) return "could not wait for nsys: " + exit.error.substr(exit.error.find(": ") + 2);
  const std::string said = last_line(log);
  if (exit.signal != 0) return "nsys was killed by signal " + std::to_string(exit.signal);
  if (exit.status != 0)
    return "nsys exited with status " + std::to_string(exit.status) + (said.empty() ? "" : ", saying: " + said);
  if (regular_mtime(out).tv_sec < 0) return "nsys exited with status 0 but wrote no " + base_name(out);
  return "";
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
    folder = make_temp_folder(folder_of(cache) + "/." + base_name(cache) + ".laptime-export-XXXXXX");
    if (folder.empty()) why_not_beside = "cannot make a folder beside it: " + std::string(std::strerror(errno)) + ".";
  }
  const bool beside = why_not_beside.empty();
  if (!beside) {
    folder = make_temp_folder(temp_dir() + "/laptime-export-XXXXXX");
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
