// Opening any trace the user names: the one place that decides what a file is, used by every
// command that reads a trace (analyze, diff's two runs, the job view, scrub, the ncu handoff).
//
// By content, never by name: SQLite's magic ("SQLite format 3") is an Nsight Systems export or
// laptime's own capture (trace/read/nsys_sqlite.h); gzip's magic or JSON's first character (`{`,
// `[`) is the PyTorch profiler's trace (trace/read/kineto_json.h) when its top level holds
// `traceEvents` (or is the bare array of the Chrome trace format), found by reading its top-level
// keys up to that one; a JSON object without it is laptime's own (a `laptime bench --json` report,
// which diff reads as a run of laps, when its `schema` says so) or no trace.
// Only what has none of these and is named .nsys-rep or .qdrep is an Nsight Systems report, read
// through its SQLite export (trace/read/nsys_export.h's open_trace_source).
#pragma once

#include <string>

#include "trace/model/trace.h"

namespace laptime::trace {

enum class TraceKind {
  NsysSqlite,   // SQLite: an nsys export or laptime's capture
  Kineto,       // JSON or gzip: the PyTorch profiler's trace
  BenchReport,  // a JSON object whose schema is laptime.bench/*: a run of laps (diff reads them)
  OtherJson,    // a JSON object without traceEvents: no trace (diff tries it as a bench report)
  NsysReport,   // none of those, named .nsys-rep or .qdrep
  Empty,        // an empty file
  Other,        // anything else, or a file that cannot be opened (the reader names why)
};

// True for a path named like an Nsight Systems report (.nsys-rep, .qdrep): the one thing about a
// trace decided by its name (a report is exported by nsys before it is read, nsys_export.h).
bool is_nsys_report(const std::string& path);

// What `path` is, from its first bytes (gunzipped when gzip). Never throws.
TraceKind trace_kind(const std::string& path);

// Reads the trace at `path` with the reader its content calls for. Throws TraceError with one
// sentence: the reader's, or, for a file that is neither SQLite nor JSON, which files laptime reads.
Trace load_trace(const std::string& path);

}  // namespace laptime::trace
