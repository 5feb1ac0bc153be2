#include "trace/read/nsys_sqlite.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/os.h"
#include "trace/read/sqlite.h"
#include "trace/model/error.h"
#include "trace/model/validate.h"
#include "trace/model/text.h"

namespace laptime::trace {

void check_is_sqlite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError("cannot open " + path + ": no such file, or it is not readable.");
  char header[16] = {};
  f.read(header, sizeof header);
  static const char kMagic[16] = "SQLite format 3";  // 15 characters and the terminating NUL
  if (f.gcount() == 16 && std::memcmp(header, kMagic, 16) == 0) return;
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) {
    const std::string stem = path.substr(0, path.rfind('.'));
    throw TraceError(path +
                     " is an Nsight Systems report; laptime reads its SQLite export: run `nsys export --type "
                     "sqlite -o " +
                     shell_word(stem + ".sqlite") + " " + shell_word(path) + "` and analyze " + stem + ".sqlite.");
  }
  if (f.gcount() == 0) throw TraceError(path + " is empty: it is not a trace.");
  throw TraceError(path +
                   " is not an SQLite file: laptime analyze reads Nsight Systems' SQLite export (`nsys export "
                   "--type sqlite REPORT.nsys-rep`) or a trace written by `laptime bench --trace`.");
}

const std::vector<TableRead>& tables_read() {
  constexpr bool R = true;  // required
  static const std::vector<TableRead> kTables = {
      {"StringIds", {{"id"}, {"value"}}},
      {"META_DATA_EXPORT",
       {{"name"}, {"value"}},
       {"LAPTIME_TRACE", "EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION", "EXPORT_SCHEMA_VERSION_MAJOR",
        "EXPORT_SCHEMA_VERSION_MINOR", "EXPORT_SCHEMA_VERSION_MICRO"}},
      {"META_DATA_CAPTURE",
       {{"name"}, {"value"}},
       {"PROCESS_0:COMMAND", "PROCESS_0:ARGUMENT_#", "PROCESS_0:WORKING_DIR", kCommandScrubbedRow}},
      {"ANALYSIS_DETAILS", {{"stopTime"}}},
      {"ThreadNames", {{"nameId", false, true}, {"globalTid"}}},
      {"TARGET_INFO_GPU", {{"id"}, {"name"}, {"smCount"}}},
      {"ENUM_CUDA_MEM_KIND", {{"id"}, {"name"}}},
      {"ENUM_CUDA_MEMCPY_OPER", {{"id"}, {"name"}}},
      {"ENUM_CUPTI_SYNC_TYPE", {{"id"}, {"name"}}},
      {"ENUM_NSYS_EVENT_TYPE", {{"id"}, {"name"}}},
      {"CUPTI_ACTIVITY_KIND_KERNEL",
       {{"start", R},
        {"end", R},
        {"deviceId"},
        {"streamId"},
        {"correlationId"},
        {"globalPid"},
        {"demangledName", false, true},
        {"shortName", false, true},
        {"gridX"},
        {"gridY"},
        {"gridZ"},
        {"blockX"},
        {"blockY"},
        {"blockZ"},
        {"graphNodeId"}}},
      {"CUPTI_ACTIVITY_KIND_MEMCPY",
       {{"start", R},
        {"end", R},
        {"deviceId"},
        {"streamId"},
        {"correlationId"},
        {"globalPid"},
        {"bytes"},
        {"copyKind"},
        {"srcKind"},
        {"dstKind"},
        {"graphNodeId"}}},
      {"CUPTI_ACTIVITY_KIND_MEMSET",
       {{"start", R},
        {"end", R},
        {"deviceId"},
        {"streamId"},
        {"correlationId"},
        {"globalPid"},
        {"bytes"},
        {"value"},
        {"memKind"},
        {"graphNodeId"}}},
      {"CUPTI_ACTIVITY_KIND_RUNTIME",
       {{"start", R}, {"end", R}, {"globalTid"}, {"correlationId"}, {"nameId", false, true}, {"returnValue"}}},
      {"CUPTI_ACTIVITY_KIND_DRIVER",
       {{"start", R}, {"end", R}, {"globalTid"}, {"correlationId"}, {"nameId", false, true}, {"returnValue"}}},
      {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
       {{"start", R}, {"end", R}, {"deviceId"}, {"streamId"}, {"correlationId"}, {"globalPid"}, {"syncType"}}},
      {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
       {{"start", R},
        {"end", R},
        {"deviceId"},
        {"streamId"},
        {"correlationId"},
        {"globalPid"},
        {"graphId"},
        {"graphExecId"}}},
      {"CUDA_GRAPH_NODE_EVENTS", {{"start", R}, {"globalTid"}, {"graphNodeId", R}, {"originalGraphNodeId"}}},
      {"NVTX_EVENTS",
       {{"start", R},
        {"end"},
        {"eventType", R},
        {"text"},
        {"textId", false, true},
        {"domainId"},
        {"category"},
        {"globalTid"},
        {"uint64Value"},
        {"int64Value"},
        {"uint32Value"},
        {"int32Value"}}},
  };
  return kTables;
}

const TableRead* table_read(const std::string& table) {
  for (const TableRead& t : tables_read())
    if (table == t.name) return &t;
  return nullptr;
}

bool row_read(const TableRead& t, const std::string& row) {
  if (t.rows.empty()) return true;
  for (const char* r : t.rows) {
    const std::string name = r;
    if (name.back() != '#') {
      if (row == name) return true;
      continue;
    }
    const std::string prefix = name.substr(0, name.size() - 1);
    if (row.size() > prefix.size() && row.compare(0, prefix.size(), prefix) == 0 &&
        row.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return true;
  }
  return false;
}

bool table_read_by_laptime(const std::string& name) {
  // META_DATA_CAPTURE is read only by captured_command, and only when it is a table.
  return table_read(name) != nullptr && name != "META_DATA_CAPTURE";
}

CapturedCommand captured_command(const std::string& sqlite_path) {
  sqlite::Db db(sqlite_path, SQLITE_OPEN_READONLY, sqlite::read_only_uri(sqlite_path));
  const sqlite::Schema schema(db.get());
  CapturedCommand c;
  if (!schema.has("META_DATA_CAPTURE") || !schema.not_a_table("META_DATA_CAPTURE").empty()) return c;
  const TableRead& table = *table_read("META_DATA_CAPTURE");
  sqlite::Stmt s(db.get(), "SELECT name, value FROM META_DATA_CAPTURE");
  std::string command;
  std::map<size_t, std::string> arguments;  // by n: ARGUMENT_n
  constexpr size_t kMaxArguments = 100000;
  const std::string argument = "PROCESS_0:ARGUMENT_";
  size_t too_many = 0;
  while (s.step()) {
    const std::string name = s.text(0);
    if (!row_read(table, name)) continue;
    if (name == "PROCESS_0:COMMAND") {
      command = s.text(1);
    } else if (name == "PROCESS_0:WORKING_DIR") {
      c.working_dir = s.text(1);
    } else if (name == kCommandScrubbedRow) {
      c.scrubbed = true;
    } else {
      const std::string n = name.substr(argument.size());
      if (n.size() < 7 && std::stoul(n) < kMaxArguments)
        arguments[std::stoul(n)] = s.text(1);
      else
        ++too_many;
    }
  }
  if (command.empty()) return c;
  c.argv.push_back(command);
  size_t i = 0;
  for (; arguments.count(i); ++i) c.argv.push_back(arguments[i]);
  // A missing number, or one past what a command line holds: the command cannot be rebuilt as it ran.
  if (i < arguments.size() || too_many)
    c.gap = too_many ? "an argument numbered past " + std::to_string(kMaxArguments - 1)
                     : "PROCESS_0:ARGUMENT_" + std::to_string(i) + " (it has " + std::to_string(arguments.size()) +
                           " numbered up to " + std::to_string(arguments.rbegin()->first) + ")";
  return c;
}

namespace {

using sqlite::Db;
using sqlite::Query;
using sqlite::quoted;
using sqlite::read_only_uri;
using sqlite::Schema;
using sqlite::Stmt;

// --- Reading ---------------------------------------------------------------------------

// A table's columns as the reader's Query takes them (tables_read(): "start!" for a required one).
std::vector<std::string> query_columns(const std::string& table) {
  std::vector<std::string> out;
  for (const ColumnRead& c : table_read(table)->columns) out.push_back(std::string(c.name) + (c.required ? "!" : ""));
  return out;
}

// id -> symbol name of an ENUM_* table, empty when the export has none.
std::map<int64_t, std::string> read_enum(sqlite3* db, Schema& schema, const std::string& table) {
  std::map<int64_t, std::string> out;
  if (!schema.has(table) || !schema.has(table, "id") || !schema.has(table, "name")) return out;
  Stmt s(db, "SELECT id, name FROM " + quoted(table) + " WHERE id IS NOT NULL");
  while (s.step()) out[s.i64(0)] = s.text(1);
  return out;
}

// Enum numbers are interpreted through the export's own ENUM_* table when it has one (so a
// renumbering in a later nsys is followed); without it, nsys's documented numbering holds.
template <typename E>
E enum_from(const std::map<int64_t, std::string>& table, int64_t value,
            const std::vector<std::pair<const char*, E>>& by_symbol, E unknown, int64_t max_identity) {
  if (!table.empty()) {
    auto it = table.find(value);
    if (it == table.end()) return unknown;
    for (const auto& [suffix, e] : by_symbol)
      if (ends_with(it->second, suffix)) return e;
    return unknown;
  }
  return value >= 0 && value <= max_identity ? static_cast<E>(value) : unknown;
}

// One row's integer columns, checked as they are read. The first column that fails decides
// why the row is left out; the getters keep returning defaults after that, so a reader fills
// its record as usual and asks ok() before keeping it.
class Row {
 public:
  Row(const Query& q, Ns span_end) : q_(q), span_end_(span_end) {}

  // A time: required, in [0, kMaxTime), and not past the capture's declared end.
  Ns time(const char* col) {
    int64_t v = 0;
    if (!get(col, &v, /*required=*/true)) return 0;
    if (v < 0 || v >= kMaxTime) return fail(DropReason::OutOfRange), 0;
    if (span_end_ >= 0 && v > span_end_) return fail(DropReason::OutOfSpan), 0;
    return v;
  }
  // A [start, end] pair of times.
  std::pair<Ns, Ns> interval(const char* start, const char* end) {
    const Ns s = time(start), e = time(end);
    if (ok() && e < s) fail(DropReason::EndBeforeStart);
    return {s, e};
  }
  // An id: required when the table has the column (`absent` when it does not), in [lo, hi].
  int64_t id(const char* col, int64_t lo, int64_t hi, int64_t absent = 0) {
    int64_t v = 0;
    const Query::Col& c = q_.col(col);
    if (!c.present) return absent;
    if (!get(c, &v, /*required=*/true)) return absent;
    if (v < lo || v > hi) return fail(DropReason::OutOfRange), absent;
    return v;
  }
  // Any other integer: NULL or absent reads as `def`; text is still refused; clamped to [lo, hi].
  int64_t value(const char* col, int64_t def, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
    int64_t v = def;
    if (!get(col, &v, /*required=*/false)) return def;
    return v < lo ? lo : v > hi ? hi : v;
  }
  // An integer that may be NULL or absent (nullopt); text is still refused.
  std::optional<int64_t> optional(const char* col) {
    int64_t v = 0;
    if (!get(col, &v, /*required=*/false)) return std::nullopt;
    return v;
  }
  // An id that may be NULL or absent (nullopt); when given, in [lo, hi].
  std::optional<int64_t> optional_id(const char* col, int64_t lo, int64_t hi) {
    const std::optional<int64_t> v = optional(col);
    if (v && (*v < lo || *v > hi)) return fail(DropReason::OutOfRange), std::nullopt;
    return v;
  }
  bool ok() const { return !failed_; }
  DropReason reason() const { return reason_; }

 private:
  bool get(const char* col, int64_t* v, bool required) { return get(q_.col(col), v, required); }
  bool get(const Query::Col& col, int64_t* v, bool required) {
    if (failed_) return false;
    switch (q_.cell(col, v)) {
      case Query::Cell::Integer:
        return true;
      case Query::Cell::Absent:
        return false;
      case Query::Cell::Null:
        if (required) fail(DropReason::Null);
        return false;
      case Query::Cell::NotInteger:
        fail(DropReason::NotInteger);
        return false;
    }
    return false;
  }
  void fail(DropReason r) {
    if (!failed_) reason_ = r;
    failed_ = true;
  }
  const Query& q_;
  Ns span_end_;
  bool failed_ = false;
  DropReason reason_ = DropReason::Null;
};

constexpr int64_t kU32 = 0xFFFFFFFFll;
constexpr int64_t kI64Max = INT64_MAX;

class Reader {
 public:
  // One thread reads the connection: no mutex around every call into SQLite.
  explicit Reader(const std::string& path)
      : path_(path), db_(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, read_only_uri(path)), schema_(db_.get()) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    file_bytes_ = f ? static_cast<size_t>(f.tellg()) : 0;
  }

  Trace read() {
    static const char* const kActivityTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL",
                                                  "CUPTI_ACTIVITY_KIND_RUNTIME",
                                                  "CUPTI_ACTIVITY_KIND_DRIVER",
                                                  "CUPTI_ACTIVITY_KIND_MEMCPY",
                                                  "CUPTI_ACTIVITY_KIND_MEMSET",
                                                  "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                                  "NVTX_EVENTS"};
    bool any = false;
    for (const char* t : kActivityTables) any = any || schema_.has(t);
    if (!any) {
      if (schema_.has("StringIds") || schema_.has("META_DATA_EXPORT"))
        throw TraceError(path_ +
                         " is an Nsight Systems export without CUDA or NVTX data: capture with `nsys profile "
                         "--trace=cuda,nvtx`.");
      throw TraceError(path_ +
                       " is an SQLite database but not an Nsight Systems export: it has none of the "
                       "CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables.");
    }

    refuse_views();
    read_strings();
    read_metadata();
    read_span();
    read_threads();
    read_gpus();
    read_kernels();
    read_memcpys();
    read_memsets();
    read_api("CUPTI_ACTIVITY_KIND_RUNTIME");
    read_api("CUPTI_ACTIVITY_KIND_DRIVER");
    read_syncs();
    read_graph_replays();
    read_graph_nodes();
    read_nvtx();
    assign_missing_pids();
    std::vector<std::string> missing;
    for (const char* table : kActivityTables)
      if (!schema_.has(table)) missing.push_back(table);
    for (std::string& note : unanswered_notes(t_, missing)) t_.notes.push_back(std::move(note));
    t_.finalize();
    check_totals(t_);
    return std::move(t_);
  }

 private:
  // Every table the reader reads must be a plain table: a view can return rows forever (a
  // recursive one does) or multiply them (a cross join), a virtual table needs a module. nsys
  // writes neither, so either means the file is not its export; said before any row is read.
  void refuse_views() const {
    Stmt s(db_.get(), "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name");
    while (s.step()) {
      const std::string name = s.text(0);
      const std::string kind = schema_.not_a_table(name);
      if (table_read_by_laptime(name) && !kind.empty())
        throw TraceError(path_ + " is not an Nsight Systems export: its " + name + " is " + kind +
                         ", where nsys writes a table.");
    }
  }

  // Room for a table's rows before they are read (Schema::rows_at_most).
  size_t rows_in(const std::string& table) const { return schema_.rows_at_most(table, file_bytes_); }

  void read_strings() {
    if (!schema_.has("StringIds")) return;
    Stmt s(db_.get(), "SELECT id, value FROM StringIds");
    // An id that is not an integer can name nothing: skipped (the rows that point at it get
    // an empty name, as for any id missing from the table).
    std::vector<std::pair<int64_t, Name>> all;
    while (s.step())
      if (s.type(0) == SQLITE_INTEGER) all.emplace_back(s.i64(0), t_.intern(s.view(1)));
    // nsys numbers its strings 0, 1, 2, ...: then a vector indexed by id, else a map. Later rows
    // win over earlier ones with the same id either way.
    int64_t lo = 0, hi = -1;
    for (const auto& [id, name] : all) lo = std::min(lo, id), hi = std::max(hi, id);
    if (lo >= 0 && hi < static_cast<int64_t>(2 * all.size() + 1024)) {
      dense_strings_.resize(static_cast<size_t>(hi + 1));
      for (const auto& [id, name] : all) dense_strings_[static_cast<size_t>(id)] = name;
    } else {
      for (const auto& [id, name] : all) strings_[id] = name;
    }
  }

  // The string a StringIds id names; empty when the table has none.
  Name string_of(int64_t id) const {
    if (!strings_.empty()) {
      auto it = strings_.find(id);
      return it == strings_.end() ? Name() : it->second;
    }
    return id >= 0 && static_cast<uint64_t>(id) < dense_strings_.size() ? dense_strings_[static_cast<size_t>(id)]
                                                                        : Name();
  }

  // The capture's end as nsys records it (ANALYSIS_DETAILS.stopTime, nanoseconds from the
  // session start like every timestamp); -1 when the export does not say.
  void read_span() {
    if (!schema_.has("ANALYSIS_DETAILS", "stopTime")) return;
    Stmt s(db_.get(), "SELECT stopTime FROM ANALYSIS_DETAILS");
    if (s.step() && s.type(0) == SQLITE_INTEGER && s.i64(0) > 0 && s.i64(0) < kMaxTime) span_end_ = s.i64(0);
  }

  // Counts one table's rows as read and, when a row failed a check, as left out. Its entry in
  // DroppedRows is found on the first row, not looked up by name for each of millions.
  class Counts {
   public:
    Counts(DroppedRows& d, std::string table) : dropped_(d), table_(std::move(table)) {}
    // True to keep the row.
    bool keep(const Row& row) {
      if (!t_) t_ = &dropped_.tables[table_];  // std::map: the entry never moves
      ++t_->read;
      if (row.ok()) return true;
      ++t_->by_reason[static_cast<int>(row.reason())];
      return false;
    }

   private:
    DroppedRows& dropped_;
    std::string table_;
    DroppedRows::Table* t_ = nullptr;
  };

  // A name column holds a StringIds id in nsys exports; accept inline text as well. Interned:
  // every row naming the same string shares it.
  Name name_of(const Query& q, const char* col) {
    const int i = Query::at(q.col(col));
    switch (q.type_at(i)) {
      case SQLITE_NULL:
        return Name();
      case SQLITE_TEXT:
        return t_.intern(q.view_at(i));
      default:
        return string_of(q.i64_at(i));
    }
  }

  void read_metadata() {
    std::map<std::string, std::string> meta;
    if (schema_.has("META_DATA_EXPORT")) {
      Stmt s(db_.get(), "SELECT name, value FROM META_DATA_EXPORT");
      while (s.step()) meta[s.text(0)] = s.text(1);
    }
    if (meta.count("LAPTIME_TRACE")) {
      t_.source = "laptime " + meta["LAPTIME_TRACE"];
      t_.format = TraceFormat::Laptime;
      return;
    }
    std::string schema = meta["EXPORT_SCHEMA_VERSION"];
    if (schema.empty() && meta.count("EXPORT_SCHEMA_VERSION_MAJOR"))
      schema = meta["EXPORT_SCHEMA_VERSION_MAJOR"] + "." + meta["EXPORT_SCHEMA_VERSION_MINOR"] + "." +
               meta["EXPORT_SCHEMA_VERSION_MICRO"];
    t_.source = "nsys";
    if (!meta["EXPORT_PRODUCT_VERSION"].empty()) t_.source += " " + meta["EXPORT_PRODUCT_VERSION"];
    if (!schema.empty()) t_.source += " (export schema " + schema + ")";
  }

  void read_threads() {
    if (!schema_.has("ThreadNames")) return;
    Query q(db_.get(), schema_, "ThreadNames", query_columns("ThreadNames"));
    Counts counts(t_.dropped, "ThreadNames");
    while (q.next()) {
      Row row(q, -1);
      const int64_t g = row.id("globalTid", 0, kI64Max);
      if (counts.keep(row)) t_.thread_names[{pid_of(g), tid_of(g)}] = name_of(q, "nameId").str();
    }
  }

  void read_gpus() {
    if (!schema_.has("TARGET_INFO_GPU")) return;
    Query q(db_.get(), schema_, "TARGET_INFO_GPU", query_columns("TARGET_INFO_GPU"));
    Counts counts(t_.dropped, "TARGET_INFO_GPU");
    while (q.next()) {
      Row row(q, -1);
      Gpu g;
      g.id = static_cast<uint32_t>(row.id("id", 0, kU32));
      g.name = q.null("name") ? "" : q.text("name");
      g.sm_count = static_cast<int>(row.value("smCount", 0, 0, 1 << 20));
      if (counts.keep(row)) t_.gpus.push_back(g);
    }
  }

  // GPU records carry globalPid; an old export without it leaves pid 0, patched below.
  uint32_t gpu_pid(const Query& q, Row& row) {
    if (!q.present("globalPid")) {
      gpu_pid_missing_ = true;
      return 0;
    }
    return pid_of(row.id("globalPid", 0, kI64Max));
  }

  // The columns every GPU activity table has (start, end, device, stream, correlation, pid), and
  // the graph node that ran the work where the table says (a node-level graph trace; NULL outside
  // graphs, and no column in older exports or the graph-level table).
  void read_gpu_work(Query& q, Row& row, GpuWork* w) {
    std::tie(w->start, w->end) = row.interval("start", "end");
    w->device = static_cast<uint32_t>(row.id("deviceId", 0, kU32));
    w->stream = static_cast<uint32_t>(row.id("streamId", 0, kU32));
    w->correlation = static_cast<uint32_t>(row.id("correlationId", 0, kU32));
    w->pid = gpu_pid(q, row);
    if (q.selected("graphNodeId"))
      if (const std::optional<int64_t> node = row.optional_id("graphNodeId", 0, kI64Max - 1))
        w->graph_node = static_cast<uint64_t>(*node);
  }

  void read_kernels() {
    const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!schema_.has(table)) return;
    Query q(db_.get(), schema_, table, query_columns(table));
    t_.kernels.reserve(rows_in(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      Kernel k;
      read_gpu_work(q, row, &k);
      k.name = name_of(q, "demangledName");
      k.short_name = name_of(q, "shortName");
      if (k.short_name.empty()) k.short_name = k.name;
      if (k.name.empty()) k.name = k.short_name;
      if (k.name.empty()) k.name = k.short_name = t_.intern("(unnamed kernel)");
      // Clamped to what Dim3 holds (CUDA's own bounds).
      auto dim = [&](const char* col) { return static_cast<uint32_t>(row.value(col, 1, 0, kU32)); };
      auto dim16 = [&](const char* col) { return static_cast<uint16_t>(row.value(col, 1, 0, 0xFFFF)); };
      k.grid = {dim("gridX"), dim16("gridY"), dim16("gridZ")};
      k.block = {dim("blockX"), dim16("blockY"), dim16("blockZ")};
      if (counts.keep(row)) t_.kernels.push_back(std::move(k));
    }
  }

  MemKind mem_kind(int64_t v) {
    static const std::vector<std::pair<const char*, MemKind>> kSymbols{{"PAGEABLE", MemKind::Pageable},
                                                                       {"PINNED", MemKind::Pinned},
                                                                       {"DEVICE_STATIC", MemKind::DeviceStatic},
                                                                       {"MANAGED_STATIC", MemKind::ManagedStatic},
                                                                       {"DEVICE", MemKind::Device},
                                                                       {"ARRAY", MemKind::Array},
                                                                       {"MANAGED", MemKind::Managed}};
    return enum_from(mem_kinds_, v, kSymbols, MemKind::Unknown, 7);
  }

  void read_memcpys() {
    const std::string table = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!schema_.has(table)) return;
    mem_kinds_ = read_enum(db_.get(), schema_, "ENUM_CUDA_MEM_KIND");
    const auto copy_kinds = read_enum(db_.get(), schema_, "ENUM_CUDA_MEMCPY_OPER");
    static const std::vector<std::pair<const char*, CopyKind>> kCopySymbols{
        {"HTOD", CopyKind::HtoD}, {"DTOH", CopyKind::DtoH}, {"HTOA", CopyKind::HtoA}, {"ATOH", CopyKind::AtoH},
        {"ATOA", CopyKind::AtoA}, {"ATOD", CopyKind::AtoD}, {"DTOA", CopyKind::DtoA}, {"DTOD", CopyKind::DtoD},
        {"HTOH", CopyKind::HtoH}, {"PTOP", CopyKind::PtoP}};
    Query q(db_.get(), schema_, table, query_columns(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      Memcpy m;
      read_gpu_work(q, row, &m);
      m.bytes = static_cast<uint64_t>(row.value("bytes", 0, 0));
      m.kind = enum_from(copy_kinds, row.value("copyKind", 0), kCopySymbols, CopyKind::Unknown, 10);
      m.src = mem_kind(row.value("srcKind", -1));
      m.dst = mem_kind(row.value("dstKind", -1));
      if (counts.keep(row)) t_.memcpys.push_back(m);
    }
  }

  void read_memsets() {
    const std::string table = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!schema_.has(table)) return;
    if (mem_kinds_.empty()) mem_kinds_ = read_enum(db_.get(), schema_, "ENUM_CUDA_MEM_KIND");
    Query q(db_.get(), schema_, table, query_columns(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      Memset m;
      read_gpu_work(q, row, &m);
      m.bytes = static_cast<uint64_t>(row.value("bytes", 0, 0));
      m.value = static_cast<uint32_t>(row.value("value", 0));
      m.mem = mem_kind(row.value("memKind", -1));
      if (counts.keep(row)) t_.memsets.push_back(m);
    }
  }

  // nsys writes runtime and driver calls alike into CUPTI_ACTIVITY_KIND_RUNTIME; the name
  // tells them apart (cuda* is the runtime, cu* the driver).
  void read_api(const std::string& table) {
    if (!schema_.has(table)) return;
    Query q(db_.get(), schema_, table, query_columns(table));
    t_.api_calls.reserve(t_.api_calls.size() + rows_in(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      ApiCall c;
      std::tie(c.start, c.end) = row.interval("start", "end");
      const int64_t g = row.id("globalTid", 0, kI64Max);
      c.pid = pid_of(g);
      c.tid = tid_of(g);
      c.correlation = static_cast<uint32_t>(row.id("correlationId", 0, kU32));
      // Normalized once per distinct name, not once per call.
      const Name raw = name_of(q, "nameId");
      auto [norm, fresh] = api_names_.try_emplace(raw.key());
      if (fresh) norm->second = t_.intern(normalize_api_name(raw));
      c.name = norm->second;
      c.return_value = static_cast<int32_t>(row.value("returnValue", 0, INT32_MIN, INT32_MAX));
      if (counts.keep(row)) t_.api_calls.push_back(std::move(c));
    }
  }

  void read_syncs() {
    const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    if (!schema_.has(table)) return;
    const auto types = read_enum(db_.get(), schema_, "ENUM_CUPTI_SYNC_TYPE");
    static const std::vector<std::pair<const char*, SyncType>> kSymbols{
        {"EVENT_SYNCHRONIZE", SyncType::EventSynchronize},
        {"STREAM_WAIT_EVENT", SyncType::StreamWaitEvent},
        {"STREAM_SYNCHRONIZE", SyncType::StreamSynchronize},
        {"CONTEXT_SYNCHRONIZE", SyncType::ContextSynchronize}};
    Query q(db_.get(), schema_, table, query_columns(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      SyncEvent s;
      std::tie(s.start, s.end) = row.interval("start", "end");
      s.device = static_cast<uint32_t>(row.id("deviceId", 0, kU32));
      // No stream (a context synchronize): CUPTI's 0xFFFFFFFF, which an export may store as -1.
      s.stream = static_cast<uint32_t>(q.null("streamId") ? kU32 : row.id("streamId", -1, kU32, kU32));
      s.correlation = static_cast<uint32_t>(row.id("correlationId", 0, kU32));
      s.pid = gpu_pid(q, row);
      s.type = enum_from(types, row.value("syncType", 0), kSymbols, SyncType::Unknown, 4);
      if (counts.keep(row)) t_.syncs.push_back(s);
    }
  }

  // nsys's default graph trace: one row per replay of a CUDA Graph, tied to its cudaGraphLaunch
  // by correlation id like any GPU work (trace/analyses/graph.h).
  void read_graph_replays() {
    const std::string table = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
    if (!schema_.has(table)) return;
    Query q(db_.get(), schema_, table, query_columns(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      GraphReplay g;
      read_gpu_work(q, row, &g);
      g.graph = static_cast<uint32_t>(row.id("graphId", 0, kU32));
      g.exec = static_cast<uint32_t>(row.value("graphExecId", 0, 0, kU32));
      if (counts.keep(row)) t_.graph_replays.push_back(g);
    }
  }

  // --cuda-graph-trace=node: when and on which thread each graph node was made, and which node an
  // instantiated copy was copied from (what names the layer of a graph's kernel, trace/analyses/graph.h).
  void read_graph_nodes() {
    const std::string table = "CUDA_GRAPH_NODE_EVENTS";
    if (!schema_.has(table)) return;
    Query q(db_.get(), schema_, table, query_columns(table));
    Counts counts(t_.dropped, table);
    while (q.next()) {
      Row row(q, span_end_);
      GraphNode n;
      n.created = row.time("start");
      const int64_t thread = row.id("globalTid", 0, kI64Max);
      n.pid = pid_of(thread);
      n.tid = tid_of(thread);
      n.id = static_cast<uint64_t>(row.id("graphNodeId", 0, kI64Max - 1));
      if (const std::optional<int64_t> o = row.optional_id("originalGraphNodeId", 0, kI64Max - 1))
        n.original = static_cast<uint64_t>(*o);
      if (counts.keep(row)) t_.graph_nodes.push_back(n);
    }
  }

  void read_nvtx() {
    const std::string table = "NVTX_EVENTS";
    if (!schema_.has(table)) return;
    // Event type numbers through ENUM_NSYS_EVENT_TYPE when present; nsys's documented
    // numbers otherwise.
    int64_t push_pop = 59, start_end = 60, domain_create = 75, category = 33;
    for (const auto& [id, name] : read_enum(db_.get(), schema_, "ENUM_NSYS_EVENT_TYPE")) {
      if (name == "NvtxPushPopRange") push_pop = id;
      if (name == "NvtxStartEndRange") start_end = id;
      if (name == "NvtxDomainCreate") domain_create = id;
      if (name == "NvtxCategory") category = id;
    }
    Query q(db_.get(), schema_, table, query_columns(table));
    struct Pending {
      NvtxEvent range;
      int64_t domain_id;
    };
    std::vector<Pending> ranges;
    ranges.reserve(rows_in(table));
    std::map<std::pair<uint32_t, int64_t>, Name> domains;  // (pid, domainId) -> name
    std::vector<std::tuple<uint32_t, int64_t, uint32_t, Name>> categories;
    size_t unclosed = 0;
    Counts counts(t_.dropped, table);
    while (q.next()) {
      if (q.null("eventType") || !q.is_integer("eventType")) {  // no type: no telling what it was
        Row row(q, -1);
        row.id("eventType", 0, kI64Max);
        counts.keep(row);
        continue;
      }
      const int64_t type = q.i64("eventType");
      const int64_t g = q.i64("globalTid");
      Name text = q.null("text") ? name_of(q, "textId") : t_.intern(q.view("text"));
      if (type == domain_create) {
        domains[{pid_of(g), q.i64("domainId")}] = text;
      } else if (type == category) {
        categories.emplace_back(pid_of(g), q.i64("domainId"), static_cast<uint32_t>(q.i64("category")), text);
      } else if (type == push_pop || type == start_end) {
        NvtxEvent r;
        r.kind = type == push_pop ? NvtxKind::PushPop : NvtxKind::StartEnd;
        r.text = std::move(text);
        if (q.null("end")) {  // pushed but never popped before the capture ended
          ++unclosed;
          continue;
        }
        Row row(q, span_end_);
        std::tie(r.start, r.end) = row.interval("start", "end");
        const int64_t thread = row.id("globalTid", 0, kI64Max);
        r.pid = pid_of(thread);
        r.tid = tid_of(thread);
        r.category = static_cast<uint32_t>(row.value("category", 0, 0, kU32));
        r.has_payload = false;
        for (const char* col : {"uint64Value", "int64Value", "uint32Value", "int32Value"})
          if (const std::optional<int64_t> v = row.optional(col)) {
            r.payload = static_cast<uint64_t>(*v);
            r.has_payload = true;
            break;
          }
        const int64_t domain = row.value("domainId", 0);
        if (counts.keep(row)) ranges.push_back({std::move(r), domain});
      }
    }
    auto domain_name = [&](uint32_t pid, int64_t id) {
      auto it = domains.find({pid, id});
      return it == domains.end() ? Name() : it->second;
    };
    t_.nvtx.reserve(t_.nvtx.size() + ranges.size());
    for (Pending& p : ranges) {
      p.range.domain = domain_name(p.range.pid, p.domain_id);
      t_.nvtx.push_back(std::move(p.range));
    }
    for (const auto& [pid, domain_id, cat, name] : categories)
      t_.category_names[{domain_name(pid, domain_id), cat}] = name;
    if (unclosed)
      t_.notes.push_back(std::to_string(unclosed) + " NVTX range" + (unclosed == 1 ? " was" : "s were") +
                         " still open when the capture ended and " + (unclosed == 1 ? "is" : "are") + " ignored.");
  }

  // Exports too old to carry globalPid on GPU records: correlation ids still match when the
  // capture holds one process, so lend them that process's pid.
  void assign_missing_pids() {
    if (!gpu_pid_missing_) return;
    std::set<uint32_t> pids;
    for (const ApiCall& c : t_.api_calls) pids.insert(c.pid);
    if (pids.size() != 1) return;
    const uint32_t pid = *pids.begin();
    for (Kernel& k : t_.kernels) k.pid = pid;
    for (Memcpy& m : t_.memcpys) m.pid = pid;
    for (Memset& m : t_.memsets) m.pid = pid;
    for (SyncEvent& s : t_.syncs) s.pid = pid;
    for (GraphReplay& g : t_.graph_replays) g.pid = pid;
  }

  std::string path_;
  Db db_;
  Schema schema_;
  std::vector<Name> dense_strings_;                  // StringIds by id, when the ids are dense
  std::unordered_map<int64_t, Name> strings_;        // StringIds by id otherwise
  std::unordered_map<const void*, Name> api_names_;  // raw name -> normalized
  std::map<int64_t, std::string> mem_kinds_;
  bool gpu_pid_missing_ = false;
  Ns span_end_ = -1;  // ANALYSIS_DETAILS.stopTime, -1 when the export does not say
  size_t file_bytes_ = 0;
  Trace t_;
};

}  // namespace

Trace load_nsys_sqlite(const std::string& path) {
  check_is_sqlite(path);
  return Reader(path).read();
}

}  // namespace laptime::trace
