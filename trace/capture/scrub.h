// `laptime scrub IN OUT`: a copy of a trace that can be shared. An nsys export records the
// capturing process's whole environment (PROCESS_n:ENVIRONMENT_VARIABLE rows, and the target's
// DeviceEnvironment: tokens, host names, paths), the command line and working folder, every
// process on the host, the program's standard output, the export's host, user and paths, and the
// GPU's UUID and bus address. The copy keeps what analyze, diff and kernels read and nothing
// else:
//   - only the tables the reader reads (StringIds, META_DATA_EXPORT, ANALYSIS_DETAILS,
//     ThreadNames, TARGET_INFO_GPU, ENUM_*, CUPTI_ACTIVITY_KIND_*, NVTX_*, the CUDA Graph
//     tables), each with its columns, types and rows in the order they were stored;
//   - of META_DATA_EXPORT, the product and schema versions (and laptime's own mark), and one row
//     LAPTIME_SCRUBBED saying it was scrubbed;
//   - of META_DATA_CAPTURE (when it is a table of name and value), the captured command line
//     and its working folder only (PROCESS_0:COMMAND, ARGUMENT_n, WORKING_DIR), which `laptime
//     kernels --command --from` reads: every environment row, the user name, pid and capture
//     options go;
//   - of TARGET_INFO_GPU, every column but the identifiers (uuid, luid, busLocation, the device
//     paths), which are NULL;
//   - of StringIds, the strings a kept column names (the kernel, API, thread and NVTX names);
//     the program's output and the paths of the tables left out go with them.
// The copy is written through core/output_file.h (a temporary renamed onto OUT), never onto its
// input, and `laptime analyze`, `diff` and `kernels` read it as they read the input, to the byte.
// A SQLite input of another kind (not an nsys export, or views where nsys writes tables) is
// refused as the reader refuses it.
#pragma once

#include <string>

namespace laptime::trace {

struct ScrubResult {
  size_t tables_kept = 0, tables_dropped = 0;
  size_t environment_rows = 0;  // environment rows (environment_rows below), dropped
  size_t strings_dropped = 0;   // StringIds rows no kept column names
};

// Copies the SQLite trace at `in` to the file at `temp` (an OutputFile's temporary: it exists and
// is empty), scrubbed as above. Throws TraceError with one sentence naming `in`.
ScrubResult scrub_trace(const std::string& in, const std::string& temp);

// The number of environment rows a trace holds: META_DATA_CAPTURE's PROCESS_n:ENVIRONMENT_
// VARIABLE rows and TARGET_INFO_SYSTEM_ENV's DeviceEnvironment; 0 when it has neither table
// (or is not SQLite: the reader says what it is).
size_t environment_rows(const std::string& path);

// A note for analyze when the trace carries an environment ("" when it does not): a trace shared
// as it is gives it away, and `laptime scrub` makes a copy that does not.
std::string environment_note(const std::string& path);

}  // namespace laptime::trace
