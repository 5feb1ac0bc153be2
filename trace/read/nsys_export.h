// Reading an Nsight Systems report (.nsys-rep, or the older .qdrep) directly: laptime reads
// the report's SQLite export, so `laptime analyze R.nsys-rep` finds or makes one first.
//
//   - R.sqlite beside the report (nsys's own default export name) at least as new as the report
//     is read as it is: a user's own export is never overwritten by an older one.
//   - Otherwise, with `nsys` on PATH, `nsys export --type sqlite` runs once into a private
//     folder beside the report, and the finished file is renamed onto R.sqlite (so a killed
//     export never leaves a half-written cache): the next run reads it. A report newer than
//     R.sqlite is exported again.
//   - When R.sqlite cannot be written there (a read-only folder, a non-regular file at that
//     path), the export goes to a temporary folder under $TMPDIR, removed when the run ends.
//   - Without nsys: one sentence naming the command to run.
// What was done is said in one line on the notes stream (standard error), so standard output
// stays the report. The export is nsys's file, not laptime's: its checks are core/output_file's
// (check_outputs), its write is nsys's own, committed by a rename.
#pragma once

#include <cstdio>
#include <string>

namespace laptime::trace {

// The export laptime reads for a report, beside it: R.nsys-rep -> R.sqlite.
std::string export_path_for(const std::string& report);

// What to hand to the trace readers for a path the user gave. Owns a temporary export, if any.
class TraceSource {
 public:
  explicit TraceSource(std::string path) : path_(std::move(path)) {}
  TraceSource(TraceSource&& other) noexcept;
  TraceSource& operator=(TraceSource&&) = delete;
  TraceSource(const TraceSource&) = delete;
  ~TraceSource();  // removes the temporary folder, when the export went to one

  const std::string& path() const { return path_; }

 private:
  friend TraceSource open_trace_source(const std::string& path, std::FILE* notes);
  std::string path_;
  std::string temp_folder_;  // set only for an export under $TMPDIR
};

// For an Nsight Systems report, its SQLite export as described above; any other path (and a
// report that does not exist, which the reader then names) comes back as it is. Throws
// TraceError with one sentence: nsys not on PATH and no current export (naming the command),
// or nsys failing (with its last line of output).
TraceSource open_trace_source(const std::string& path, std::FILE* notes);

}  // namespace laptime::trace
