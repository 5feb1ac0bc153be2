// Nsight Systems' SQLite export, read into the trace model. laptime's own captures are written
// in the same schema (capture/nsys_writer.h), so `laptime analyze` reads both through this path,
// and so does anything else that reads nsys exports.
//
// The reader follows the schema nsys documents for `nsys export --type sqlite`:
//   CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET / _SYNCHRONIZATION  GPU side, by correlationId
//   CUPTI_ACTIVITY_KIND_RUNTIME (and _DRIVER where present)            host API calls
//   NVTX_EVENTS      eventType 59 push/pop, 60 start/end, 75 domain create, 33 category name
//   StringIds        every name (kernel shortName/demangledName, API nameId, NVTX textId)
//   ThreadNames, TARGET_INFO_GPU, META_DATA_EXPORT, ENUM_*                 labels
// Tables are created lazily by nsys, so any of them may be missing (a capture without
// NVTX, without memsets, ...), and columns come and go between versions: every table and
// column is looked up (sqlite_master, PRAGMA table_info) before it is read, and the ENUM_*
// tables, when present, decide what an enum number means.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// Reads an nsys SQLite export (or a laptime trace). Throws TraceError with one sentence for a
// missing file, a file that is not SQLite (an .nsys-rep gets the export command to run),
// or an SQLite database that is not an nsys export. The result is finalized.
Trace load_nsys_sqlite(const std::string& path);

// Throws TraceError with one sentence when `path` is missing, empty, or not an SQLite file (an
// .nsys-rep gets the export command to run).
void check_is_sqlite(const std::string& path);

// What laptime reads of an export, table by table and column by column: the reader builds its
// queries from this list, `laptime kernels --command --from` reads META_DATA_CAPTURE's rows
// through captured_command below, and `laptime scrub` (trace/capture/scrub.h) copies exactly
// this and nothing else. One list, so a column the reader starts to read is one scrub keeps.
struct ColumnRead {
  const char* name;
  bool required = false;   // a table without it is no export laptime can read ("start!" in a Query)
  bool string_id = false;  // holds a StringIds id (or the text itself): the strings scrub keeps
};
struct TableRead {
  const char* name;
  std::vector<ColumnRead> columns;
  // Tables of name and value rows (META_DATA_EXPORT, META_DATA_CAPTURE): the names read, a
  // trailing '#' standing for a run of digits (PROCESS_0:ARGUMENT_#); empty: every row.
  std::vector<const char*> rows;
};
const std::vector<TableRead>& tables_read();
// The entry for `table`, nullptr when laptime reads no such table.
const TableRead* table_read(const std::string& table);
// Whether `row` is one of `t.rows` (every row when the list is empty).
bool row_read(const TableRead& t, const std::string& row);

// Whether load_nsys_sqlite reads the table of that name: what must be a plain table, not a view.
bool table_read_by_laptime(const std::string& name);

// The command line a capture recorded (nsys's META_DATA_CAPTURE: PROCESS_0:COMMAND,
// PROCESS_0:ARGUMENT_n, PROCESS_0:WORKING_DIR); argv empty when the export has none (older
// exports, laptime's own CUPTI traces). A gap in the numbered arguments is said (`gap`), never
// read past silently; `scrubbed` when `laptime scrub` removed the arguments and the folder (the
// program's base name alone is left).
struct CapturedCommand {
  std::vector<std::string> argv;
  std::string working_dir;
  bool scrubbed = false;
  std::string gap;  // "ARGUMENT_3 (of 0-5)" when one is missing; empty otherwise
};
// Throws TraceError when `sqlite_path` cannot be opened as SQLite.
CapturedCommand captured_command(const std::string& sqlite_path);

// The META_DATA_CAPTURE row `laptime scrub` writes when it removed the command's arguments and
// working folder.
inline constexpr const char* kCommandScrubbedRow = "LAPTIME_COMMAND_SCRUBBED";

// nsys packs process and thread into one "Serialized GlobalId": tid in the low 24 bits,
// pid in the next 24 (the bits above name the VM / hardware, which a single-host trace
// doesn't need).
inline uint32_t pid_of(int64_t global_id) { return static_cast<uint32_t>((global_id >> 24) & 0xFFFFFF); }
inline uint32_t tid_of(int64_t global_id) { return static_cast<uint32_t>(global_id & 0xFFFFFF); }
inline int64_t global_tid(uint32_t pid, uint32_t tid) {
  return (static_cast<int64_t>(pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF);
}

}  // namespace laptime::trace
