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
#include "trace/read/nsys_sqlite.h"
#include "trace/read/open_trace.h"
#include "trace/read/sidecars.h"
#include "trace/read/sqlite.h"
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
  std::string line =
      text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
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

// Why laptime could not read the export nsys just wrote, "" when it can: an SQLite file with the
// tables of an nsys export of CUDA or NVTX data (a truncated or foreign file fails here, once).
std::string unreadable_export(const std::string& out) {
  try {
    check_is_sqlite(out);
    sqlite::Db db(out, SQLITE_OPEN_READONLY, sqlite::read_only_uri(out));
    sqlite::Stmt s(db.get(),
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND (name = 'NVTX_EVENTS' OR "
                   "substr(name, 1, 20) = 'CUPTI_ACTIVITY_KIND_')");
    if (!s.step() || s.i64(0) == 0) return "it holds no CUDA or NVTX tables";
  } catch (const TraceError& e) {
    std::string why = e.what();
    for (size_t at; (at = why.find(out)) != std::string::npos;)
      why.replace(at, out.size(), "it");  // not the temporary's name
    if (!why.empty() && why.back() == '.') why.pop_back();
    return "laptime cannot read it (" + why + ")";
  }
  return "";
}

}  // namespace

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
  // What the file is comes from its content (trace/read/open_trace.h): only a report is exported.
  if (report_time.tv_sec < 0 || trace_kind(path) != TraceKind::NsysReport) return TraceSource(path);
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
    const std::string command = std::string("nsys export --type sqlite ") + (stale ? "--force-overwrite true " : "") +
                                "-o " + shell_word(cache) + " " + shell_word(path);
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
  // Folders named for this process: a run stopped by Ctrl-C leaves its folder, and the next
  // export of the same report (or into $TMPDIR) removes the folders of runs no longer alive.
  const std::string beside_prefix = "." + base_name(cache) + ".laptime-export-", tmp_prefix = "laptime-export-";
  std::string folder;
  if (why_not_beside.empty()) {
    remove_dead_temporaries(folder_of(cache), beside_prefix);
    folder = make_temp_folder(folder_of(cache) + "/" + owned_prefix(beside_prefix) + "XXXXXX");
    if (folder.empty()) why_not_beside = "cannot make a folder beside it: " + std::string(std::strerror(errno)) + ".";
  }
  const bool beside = why_not_beside.empty();
  if (!beside) {
    remove_dead_temporaries(temp_dir(), tmp_prefix);
    folder = make_temp_folder(temp_dir() + "/" + owned_prefix(tmp_prefix) + "XXXXXX");
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
    std::fprintf(
        notes, "laptime: exporting %s with `nsys export --type sqlite` to a temporary file, removed when done (%s).\n",
        escape_name(path).c_str(), escape_name(why_not_beside).c_str());
  std::fflush(notes);

  TraceSource source(out);
  source.temp_folder_ = folder;  // removed on any failure below, and after the run when temporary
  const std::string failed = run_nsys_export(nsys, path, out, folder + "/nsys-export.log");
  if (!failed.empty()) throw TraceError("cannot export " + path + " to SQLite: " + failed + ".");
  // An export laptime cannot read is not kept as R.sqlite for every later run to read.
  if (const std::string bad = unreadable_export(out); !bad.empty())
    throw TraceError("cannot export " + path + " to SQLite: nsys wrote " + base_name(cache) + ", but " + bad +
                     "; it is not kept.");
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
  // A report stamped in the future (a clock ahead, a copy that kept its time) would make every
  // later run find the export older than the report and export it again: it takes the report's time.
  if (const struct timespec now = regular_mtime(cache); now.tv_sec >= 0 && !not_older(now, report_time)) {
    const struct timespec times[2] = {report_time, report_time};
    ::utimensat(AT_FDCWD, cache.c_str(), times, 0);
  }
  source.path_ = cache;
  remove_folder(folder);
  source.temp_folder_.clear();
  return source;
}

}  // namespace laptime::trace
