#include "trace/read/open_trace.h"

#include <rapidjson/reader.h>

#include <fstream>
#include <string_view>

#include "core/os.h"
#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/byte_source.h"
#include "trace/read/kineto_json.h"
#include "trace/read/nsys_sqlite.h"

namespace laptime::trace {

bool is_nsys_report(const std::string& path) { return ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"); }

namespace {

// What a JSON document's top level says: `traceEvents` (read no further than that key), a bare
// array, or an object whose "schema" is one of laptime's. A document that cannot be parsed that far
// is left to the reader, which says why.
struct TopLevel : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TopLevel> {
  int depth = 0;
  bool trace = false, schema_next = false;
  std::string schema;
  bool Default() {
    schema_next = false;
    return true;
  }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return Default(); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (schema_next && depth == 1) schema.assign(s, n);
    return Default();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (depth == 1 && std::string_view(s, n) == "traceEvents") return trace = true, false;
    schema_next = depth == 1 && std::string_view(s, n) == "schema";
    return true;
  }
  bool StartObject() { return open(); }
  bool StartArray() {
    if (depth == 0) return trace = true, false;  // the Chrome trace format's bare array of events
    return open();
  }
  bool EndObject(rapidjson::SizeType) { return --depth, true; }
  bool EndArray(rapidjson::SizeType) { return --depth, true; }
  bool open() {
    schema_next = false;
    if (++depth > 64) return trace = true, false;  // the reader refuses it in its words
    return true;
  }
};

TopLevel top_level(const std::string& path) {
  TopLevel top;
  try {
    ByteSource src(path);
    JsonStream in(src);
    rapidjson::Reader reader;
    const rapidjson::ParseResult ok =
        reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag>(in, top);
    if (!ok && !top.trace && ok.Code() != rapidjson::kParseErrorTermination) top.trace = true;
  } catch (const TraceError&) {
    top.trace = true;  // a damaged gzip stream: the reader says so
  }
  return top;
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
    case FileMagic::Json: {
      const TopLevel top = top_level(path);
      if (top.trace) return TraceKind::Kineto;
      return top.schema.rfind("laptime.bench/", 0) == 0 ? TraceKind::BenchReport : TraceKind::OtherJson;
    }
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
    case TraceKind::OtherJson:  // the reader says it holds no traceEvents
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
