#include "trace/read/open_trace.h"

#include <fstream>
#include <string_view>

#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/byte_source.h"
#include "trace/read/kineto_json.h"
#include "trace/read/nsys_export.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {
namespace {

// A bench report's first key is "schema" (laptime writes it first); a Kineto trace's is
// "schemaVersion", "traceEvents", "deviceProperties", ...
bool first_key_is_schema(const std::string& path) {
  try {
    ByteSource src(path);
    std::string head;
    for (std::string_view chunk; head.size() < 256 && !(chunk = src.next()).empty();) head.append(chunk);
    size_t i = head.find('{');
    if (i == std::string::npos) return false;
    i = head.find_first_not_of(" \t\r\n", i + 1);
    return i != std::string::npos && head.compare(i, 8, "\"schema\"") == 0;
  } catch (const TraceError&) {
    return false;
  }
}

}  // namespace

TraceKind trace_kind(const std::string& path) {
  FileMagic magic = FileMagic::Other;
  try {
    magic = sniff_file(path);
  } catch (const TraceError&) {
    return TraceKind::Other;
  }
  switch (magic) {
    case FileMagic::Sqlite:
      return TraceKind::NsysSqlite;
    case FileMagic::Gzip:
      return TraceKind::Kineto;
    case FileMagic::Json:
      return first_key_is_schema(path) ? TraceKind::BenchReport : TraceKind::Kineto;
    case FileMagic::Empty:
      return TraceKind::Empty;
    case FileMagic::Other:
      return is_nsys_report(path) ? TraceKind::NsysReport : TraceKind::Other;
  }
  return TraceKind::Other;
}

Trace load_trace(const std::string& path) {
  switch (trace_kind(path)) {
    case TraceKind::Kineto:
      return load_kineto_json(path);
    case TraceKind::BenchReport:
      throw TraceError(escape_name(path) +
                       " is a `laptime bench --json` report, not a trace: `laptime diff` compares it with another "
                       "run; `laptime analyze` reads the trace of a run.");
    case TraceKind::Other:
      // A missing or unreadable file, an .nsys-rep: the SQLite reader's sentences name them.
      if (is_nsys_report(path) || !std::ifstream(path)) return load_nsys_sqlite(path);
      throw TraceError(escape_name(path) +
                       " is not an SQLite file, nor JSON: laptime reads Nsight Systems' SQLite export (`nsys export "
                       "--type sqlite REPORT.nsys-rep`), a trace written by `laptime bench --trace`, or the PyTorch "
                       "profiler's trace (torch.profiler's JSON, gzipped or not).");
    default:
      return load_nsys_sqlite(path);
  }
}

}  // namespace laptime::trace
