// Trace files: Nsight Systems' SQLite export, read into the trace model; and the same
// schema written back, which is laptime's own trace format (the CUPTI tracer saves its
// captures this way, so `laptime analyze` reads both through one path, and so does
// anything else that reads nsys exports).
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

#include <string>

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// Reads an nsys SQLite export (or a laptime trace). Throws TraceError with one sentence for a
// missing file, a file that is not SQLite (an .nsys-rep gets the export command to run),
// or an SQLite database that is not an nsys export. The result is finalized.
Trace load_nsys_sqlite(const std::string& path);

// Writes `t` as the subset of the nsys schema that load_nsys_sqlite reads, replacing any
// file at `path`. Thread ids are packed into globalTid as nsys packs them
// ((pid << 24) | tid), so the file also opens in scripts written for nsys exports.
void save_nsys_sqlite(const Trace& t, const std::string& path);

}  // namespace laptime::trace
