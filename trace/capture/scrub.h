// `laptime scrub IN OUT`: a copy of a trace that can be shared. An nsys export records the
// capturing process's whole environment (PROCESS_n:ENVIRONMENT_VARIABLE rows, and the target's
// DeviceEnvironment: tokens, host names, paths), the command line and working folder, every
// process on the host, the program's standard output, the export's host, user and paths, and the
// GPU's UUID and bus address. The copy holds what laptime reads and nothing else, as the reader
// lists it (trace/read/nsys_sqlite.h, tables_read(): one list for both):
//   - of the tables laptime reads, only the columns it reads, with their types and rows in the
//     order they were stored; every other table goes, whatever its name;
//   - of META_DATA_EXPORT, the rows the reader reads (product and schema versions, laptime's own
//     mark), and one row LAPTIME_SCRUBBED saying it was scrubbed;
//   - of META_DATA_CAPTURE, by default the program's base name alone (PROCESS_0:COMMAND
//     `/home/alice/venv/bin/python3` becomes `python3`) and a row saying the rest was removed: the
//     arguments (`--api-key=...`) and the working folder go, so `laptime kernels --command --from`
//     asks for the program after --. With CommandLine::Keep (--keep-command), the command, its
//     arguments and working folder as recorded. Every environment row, the user name, pid and
//     capture options go either way;
//   - of StringIds, the strings a kept column names (kernel, API, thread and NVTX names); the
//     program's output and the paths of the tables left out go with them.
// SQL is built only from the list's names, each through sql_identifier (trace/model/text.h), and
// run one statement at a time (sqlite::Stmt refuses a string of several): a table of the input
// named like SQL is a table laptime does not read, dropped, never put into a statement. The copy
// is written into an OutputFile's temporary (core/output_file.h), never onto its input, and
// `laptime analyze`, `diff` and `kernels` read it as they read the input, to the byte.
// A SQLite input of another kind (not an nsys export, or views where nsys writes tables) is
// refused as the reader refuses it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace laptime::trace {

// What happens to the captured command line (nsys's META_DATA_CAPTURE).
enum class CommandLine {
  BaseName,  // the program's base name only: arguments and working folder removed (the default)
  Keep,      // as recorded (--keep-command)
};

struct ScrubResult {
  std::vector<std::string> tables_kept;  // in the input's order
  size_t tables_in = 0;                  // the input's tables and views
  size_t columns_kept = 0;
  size_t columns_dropped = 0;               // columns of the kept tables that laptime does not read
  size_t environment_rows = 0;              // environment rows (environment_rows below), dropped
  size_t metadata_rows_dropped = 0;         // other META_DATA_EXPORT / META_DATA_CAPTURE rows laptime does not read
  size_t strings_in = 0, strings_kept = 0;  // StringIds rows
  // The captured command: whether the input has one, what is left of it.
  bool command = false;
  CommandLine command_mode = CommandLine::BaseName;
  std::string program;       // the base name kept (BaseName), or the command as recorded (Keep)
  size_t arguments = 0;      // the recorded arguments: removed (BaseName) or kept (Keep)
  bool working_dir = false;  // a working folder was recorded: removed (BaseName) or kept (Keep)
};

// Copies the SQLite trace at `in` to the file at `temp` (an OutputFile's temporary: it exists and
// is empty), scrubbed as above. Throws TraceError with one sentence naming `in`.
ScrubResult scrub_trace(const std::string& in, const std::string& temp, CommandLine command);

// The number of environment rows a trace holds: META_DATA_CAPTURE's PROCESS_n:ENVIRONMENT_
// VARIABLE rows and TARGET_INFO_SYSTEM_ENV's DeviceEnvironment; 0 when it has neither table
// (or is not SQLite: the reader says what it is).
size_t environment_rows(const std::string& path);

// A note for analyze when the trace carries an environment ("" when it does not): a trace shared
// as it is gives it away, and `laptime scrub` makes a copy that does not.
std::string environment_note(const std::string& path);

}  // namespace laptime::trace
