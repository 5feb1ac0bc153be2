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

#include "trace/model/error.h"
#include "trace/model/trace.h"

namespace laptime::trace {

// Reads an nsys SQLite export (or a laptime trace). Throws TraceError with one sentence for a
// missing file, a file that is not SQLite (an .nsys-rep gets the export command to run),
// or an SQLite database that is not an nsys export. The result is finalized.
Trace load_nsys_sqlite(const std::string& path);

// nsys packs process and thread into one "Serialized GlobalId": tid in the low 24 bits,
// pid in the next 24 (the bits above name the VM / hardware, which a single-host trace
// doesn't need).
inline uint32_t pid_of(int64_t global_id) { return static_cast<uint32_t>((global_id >> 24) & 0xFFFFFF); }
inline uint32_t tid_of(int64_t global_id) { return static_cast<uint32_t>(global_id & 0xFFFFFF); }
inline int64_t global_tid(uint32_t pid, uint32_t tid) {
  return (static_cast<int64_t>(pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF);
}

}  // namespace laptime::trace
