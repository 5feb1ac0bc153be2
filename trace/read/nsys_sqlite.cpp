#include "trace/read/nsys_sqlite.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "trace/model/error.h"
#include "trace/model/validate.h"

namespace laptime::trace {
namespace {

// nsys packs process and thread into one "Serialized GlobalId": tid in the low 24 bits,
// pid in the next 24 (the bits above name the VM / hardware, which a single-host trace
// doesn't need).
uint32_t pid_of(int64_t global_id) { return static_cast<uint32_t>((global_id >> 24) & 0xFFFFFF); }
uint32_t tid_of(int64_t global_id) { return static_cast<uint32_t>(global_id & 0xFFFFFF); }
int64_t global_tid(uint32_t pid, uint32_t tid) {
  return (static_cast<int64_t>(pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF);
}

std::string quoted(const std::string& identifier) { return "\"" + identifier + "\""; }

// --- A minimal RAII layer over the SQLite C API. ---------------------------------------

// How a trace is opened for reading: an URI with the path percent-encoded, read-only and, unless
// a write-ahead log beside it holds pages the file lacks, immutable, so SQLite neither creates
// -wal and -shm files beside a WAL-mode trace nor needs a writable folder for them.
std::string read_only_uri(const std::string& path) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";  // an empty authority before an absolute path
  for (const unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  struct stat wal {};
  const bool pending = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  return uri + (pending ? "?mode=ro" : "?immutable=1");
}

class Db {
 public:
  // `uri`, when given, is what SQLite opens (read_only_uri); `path` is what messages name.
  Db(const std::string& path, int flags, const std::string& uri = {}) {
    if (sqlite3_open_v2((uri.empty() ? path : uri).c_str(), &db_, flags | (uri.empty() ? 0 : SQLITE_OPEN_URI),
                        nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw TraceError("cannot open " + path + " as an SQLite database: " + msg + ".");
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  sqlite3* get() const { return db_; }

  void exec(const std::string& sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw TraceError("SQLite statement failed (" + msg + "): " + sql.substr(0, 80));
    }
  }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
      throw TraceError("SQLite cannot prepare a statement (" + std::string(sqlite3_errmsg(db)) + "): " + sql.substr(0, 80));
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw TraceError("SQLite read failed: " + std::string(sqlite3_errmsg(db_)) + ".");
  }
  int type(int col) const { return sqlite3_column_type(st_, col); }
  int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
  // The cell's type and, when it is an integer, its value: one call into SQLite for both (the
  // value object is unprotected, which is safe on the one thread that reads the connection).
  int integer(int col, int64_t* v) const {
    sqlite3_value* cell = sqlite3_column_value(st_, col);
    const int t = sqlite3_value_type(cell);
    if (t == SQLITE_INTEGER) *v = sqlite3_value_int64(cell);
    return t;
  }
  double f64(int col) const { return sqlite3_column_double(st_, col); }
  std::string text(int col) const { return std::string(view(col)); }
  // Valid until the next step: for interning without a copy.
  std::string_view view(int col) const {
    const unsigned char* s = sqlite3_column_text(st_, col);
    return s ? std::string_view(reinterpret_cast<const char*>(s), static_cast<size_t>(sqlite3_column_bytes(st_, col)))
             : std::string_view();
  }

  // Writing: bind 1-based parameters, step once, reset for the next row.
  void bind(int i, int64_t v) { check(sqlite3_bind_int64(st_, i, v)); }
  void bind(int i, const std::string& v) { check(sqlite3_bind_text(st_, i, v.c_str(), -1, SQLITE_TRANSIENT)); }
  void bind_null(int i) { check(sqlite3_bind_null(st_, i)); }
  void insert() {
    if (sqlite3_step(st_) != SQLITE_DONE) throw TraceError("SQLite write failed: " + std::string(sqlite3_errmsg(db_)) + ".");
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  // One row of integers, bound to parameters 1, 2, ... in order, then inserted; `nullable` ones
  // follow the others and are NULL where they hold nothing.
  void insert_row(std::initializer_list<int64_t> values, std::initializer_list<std::optional<int64_t>> nullable = {}) {
    int i = 1;
    for (int64_t v : values) bind(i++, v);
    for (const std::optional<int64_t>& v : nullable) v ? bind(i++, *v) : bind_null(i++);
    insert();
  }

 private:
  void check(int rc) const {
    if (rc != SQLITE_OK) throw TraceError("SQLite bind failed: " + std::string(sqlite3_errmsg(db_)) + ".");
  }
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

// Which tables and columns this file has. nsys creates tables lazily and adds columns
// over versions, so the reader asks before it reads.
class Schema {
 public:
  explicit Schema(sqlite3* db) : db_(db) {
    // sqlite_master is read first and alone: nothing here runs a view or a virtual table.
    Stmt s(db, "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')");
    while (s.step()) {
      tables_.insert(s.text(0));
      const std::string sql = s.text(2);
      if (s.text(1) == "view") kinds_[s.text(0)] = "a view";
      else if (sql.compare(0, 14, "CREATE VIRTUAL") == 0 || sql.compare(0, 14, "create virtual") == 0)
        kinds_[s.text(0)] = "a virtual table";
    }
  }
  // "a view" or "a virtual table" when `table` is not a plain table (nsys writes only those:
  // a view can run forever, a virtual table needs a module), "" otherwise.
  std::string not_a_table(const std::string& table) const {
    auto it = kinds_.find(table);
    return it == kinds_.end() ? std::string() : it->second;
  }
  // How many rows `table` holds at most, for reserving: its largest rowid (nsys appends, so
  // that is its row count), but never more than the file could hold.
  size_t rows_at_most(const std::string& table, size_t file_bytes) const {
    if (!has(table)) return 0;
    Stmt s(db_, "SELECT MAX(rowid) FROM " + quoted(table));
    const int64_t n = s.step() && s.type(0) == SQLITE_INTEGER ? s.i64(0) : 0;
    return static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(n, static_cast<int64_t>(file_bytes / 8))));
  }
  bool has(const std::string& table) const { return tables_.count(table) > 0; }
  bool has(const std::string& table, const std::string& column) {
    auto it = columns_.find(table);
    if (it == columns_.end()) {
      std::set<std::string> cols;
      if (has(table)) {
        Stmt s(db_, "PRAGMA table_info(" + quoted(table) + ")");
        while (s.step()) cols.insert(s.text(1));  // columns: cid, name, type, notnull, dflt, pk
      }
      it = columns_.emplace(table, std::move(cols)).first;
    }
    return it->second.count(column) > 0;
  }

 private:
  sqlite3* db_;
  std::set<std::string> tables_;
  std::map<std::string, std::string> kinds_;  // tables that are views or virtual tables
  std::map<std::string, std::set<std::string>> columns_;
};

// SELECT over one table, by column name. A column this version of nsys didn't write reads
// as NULL (and then as the getter's default); a column marked required ("start!") that is
// missing makes the file unreadable, said in one sentence.
class Query {
 public:
  Query(sqlite3* db, Schema& schema, const std::string& table, const std::vector<std::string>& columns)
      : stmt_(db, build(schema, table, columns)) {}

  // A column as a reader names it: its index in the SELECT (-1 when the query did not ask for
  // it) and whether the table has it (an absent one reads as NULL).
  struct Col {
    const char* literal;
    int index;
    bool present;
  };
  // Column names are string literals, looked up for every cell of millions of rows: each
  // literal is resolved once by name and then found by its address, starting at the column
  // asked for last (a reader asks for the same columns in the same order every row, often
  // one twice in a row), so a lookup is one or two pointer compares.
  const Col& col(const char* name) const {
    const size_t n = resolved_.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = last_ + k < n ? last_ + k : last_ + k - n;
      if (resolved_[i].literal == name) return resolved_[last_ = i];
    }
    auto it = index_.find(name);
    resolved_.push_back({name, it == index_.end() ? -1 : it->second, present_.count(name) > 0});
    return resolved_[last_ = n];
  }

  bool next() { return stmt_.step(); }
  // Whether the table has the column (an absent one reads as NULL).
  bool present(const char* c) const { return col(c).present; }
  // Whether the query asked for the column at all (present or read as NULL).
  bool selected(const char* c) const { return col(c).index >= 0; }
  bool null(const char* c) const { return stmt_.type(at(col(c))) == SQLITE_NULL; }
  // What an integer column holds in this row.
  enum class Cell { Integer, Absent, Null, NotInteger };
  Cell cell(const Col& c, int64_t* v) const {
    switch (stmt_.integer(at(c), v)) {
      case SQLITE_INTEGER: return Cell::Integer;
      case SQLITE_NULL: return c.present ? Cell::Null : Cell::Absent;
      default: return Cell::NotInteger;  // text, real or blob: SQLite would read "abc" as 0
    }
  }
  int64_t i64(const char* c, int64_t def = 0) const {
    const int i = at(col(c));
    return stmt_.type(i) == SQLITE_NULL ? def : stmt_.i64(i);
  }
  std::string text(const char* c) const { return stmt_.text(at(col(c))); }
  std::string_view view(const char* c) const { return stmt_.view(at(col(c))); }
  int type(const char* c) const { return stmt_.type(at(col(c))); }
  bool is_text(const char* c) const { return type(c) == SQLITE_TEXT; }
  bool is_integer(const char* c) const { return type(c) == SQLITE_INTEGER; }
  // The column's cell, whatever it holds: an integer column read once for its type and value.
  int64_t i64_at(int index) const { return stmt_.i64(index); }
  int type_at(int index) const { return stmt_.type(index); }
  std::string_view view_at(int index) const { return stmt_.view(index); }
  static int at(const Col& c) {
    if (c.index < 0) throw std::logic_error(std::string("Query: column not selected: ") + c.literal);
    return c.index;
  }

 private:
  std::string build(Schema& schema, const std::string& table, const std::vector<std::string>& columns) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string name = columns[i];
      const bool required = !name.empty() && name.back() == '!';
      if (required) name.pop_back();
      const bool present = schema.has(table, name);
      if (required && !present)
        throw TraceError("table " + table + " has no `" + name + "` column: this SQLite file is not an Nsight Systems "
                    "export laptime can read.");
      sql += (i ? ", " : "") + (present ? quoted(name) : "NULL AS " + quoted(name));
      index_[name] = static_cast<int>(i);
      if (present) present_.insert(name);
    }
    resolved_.reserve(2 * columns.size() + 8);  // references col() returns stay valid in a reader's loop
    return sql + " FROM " + quoted(table);
  }

  std::map<std::string, int> index_;  // filled by build() before stmt_ is constructed
  std::set<std::string> present_;
  mutable std::vector<Col> resolved_;
  mutable size_t last_ = 0;
  Stmt stmt_;
};

// --- Reading ---------------------------------------------------------------------------

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One sentence for anything that is not an SQLite file, before SQLite gets to say "file is
// not a database" in its own words.
void check_is_sqlite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TraceError("cannot open " + path + ": no such file, or it is not readable.");
  char header[16] = {};
  f.read(header, sizeof header);
  static const char kMagic[16] = "SQLite format 3";  // 15 characters and the terminating NUL
  if (f.gcount() == 16 && std::memcmp(header, kMagic, 16) == 0) return;
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) {
    const std::string stem = path.substr(0, path.rfind('.'));
    throw TraceError(path + " is an Nsight Systems report; laptime reads its SQLite export: run `nsys export --type "
                "sqlite -o " + stem + ".sqlite " + path + "` and analyze " + stem + ".sqlite.");
  }
  if (f.gcount() == 0) throw TraceError(path + " is empty: it is not a trace.");
  throw TraceError(path + " is not an SQLite file: laptime analyze reads Nsight Systems' SQLite export (`nsys export "
              "--type sqlite REPORT.nsys-rep`) or a trace written by `laptime bench --trace`.");
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
      case Query::Cell::Integer: return true;
      case Query::Cell::Absent: return false;
      case Query::Cell::Null:
        if (required) fail(DropReason::Null);
        return false;
      case Query::Cell::NotInteger: fail(DropReason::NotInteger); return false;
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
      : path_(path),
        db_(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, read_only_uri(path)),
        schema_(db_.get()) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    file_bytes_ = f ? static_cast<size_t>(f.tellg()) : 0;
  }

  Trace read() {
    static const char* const kActivityTables[] = {
        "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",         "CUPTI_ACTIVITY_KIND_DRIVER",
        "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "NVTX_EVENTS"};
    bool any = false;
    for (const char* t : kActivityTables) any = any || schema_.has(t);
    if (!any) {
      if (schema_.has("StringIds") || schema_.has("META_DATA_EXPORT"))
        throw TraceError(path_ + " is an Nsight Systems export without CUDA or NVTX data: capture with `nsys profile "
                    "--trace=cuda,nvtx`.");
      throw TraceError(path_ + " is an SQLite database but not an Nsight Systems export: it has none of the "
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
      const bool read_here = name == "StringIds" || name == "META_DATA_EXPORT" || name == "ANALYSIS_DETAILS" ||
                             name == "ThreadNames" || name.rfind("TARGET_INFO_", 0) == 0 ||
                             name.rfind("ENUM_", 0) == 0 || name.rfind("CUPTI_", 0) == 0 ||
                             name.rfind("NVTX_", 0) == 0 || name.find("GRAPH") != std::string::npos;
      const std::string kind = schema_.not_a_table(name);
      if (read_here && !kind.empty())
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
    return id >= 0 && static_cast<uint64_t>(id) < dense_strings_.size() ? dense_strings_[static_cast<size_t>(id)] : Name();
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
      case SQLITE_NULL: return Name();
      case SQLITE_TEXT: return t_.intern(q.view_at(i));
      default: return string_of(q.i64_at(i));
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
    Query q(db_.get(), schema_, "ThreadNames", {"nameId", "globalTid"});
    Counts counts(t_.dropped, "ThreadNames");
    while (q.next()) {
      Row row(q, -1);
      const int64_t g = row.id("globalTid", 0, kI64Max);
      if (counts.keep(row)) t_.thread_names[{pid_of(g), tid_of(g)}] = name_of(q, "nameId").str();
    }
  }

  void read_gpus() {
    if (!schema_.has("TARGET_INFO_GPU")) return;
    Query q(db_.get(), schema_, "TARGET_INFO_GPU", {"id", "name", "smCount"});
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
    Query q(db_.get(), schema_, table,
            {"start!", "end!", "deviceId", "streamId", "correlationId", "globalPid", "demangledName", "shortName",
             "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "graphNodeId"});
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
    static const std::vector<std::pair<const char*, MemKind>> kSymbols{
        {"PAGEABLE", MemKind::Pageable},          {"PINNED", MemKind::Pinned},   {"DEVICE_STATIC", MemKind::DeviceStatic},
        {"MANAGED_STATIC", MemKind::ManagedStatic}, {"DEVICE", MemKind::Device}, {"ARRAY", MemKind::Array},
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
    Query q(db_.get(), schema_, table,
            {"start!", "end!", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind", "srcKind",
             "dstKind", "graphNodeId"});
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
    Query q(db_.get(), schema_, table,
            {"start!", "end!", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "value", "memKind", "graphNodeId"});
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
    Query q(db_.get(), schema_, table, {"start!", "end!", "globalTid", "correlationId", "nameId", "returnValue"});
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
    Query q(db_.get(), schema_, table,
            {"start!", "end!", "deviceId", "streamId", "correlationId", "globalPid", "syncType"});
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
    Query q(db_.get(), schema_, table,
            {"start!", "end!", "deviceId", "streamId", "correlationId", "globalPid", "graphId", "graphExecId"});
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
    Query q(db_.get(), schema_, table, {"start!", "globalTid", "graphNodeId!", "originalGraphNodeId"});
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
    Query q(db_.get(), schema_, table,
            {"start!", "end", "eventType!", "text", "textId", "domainId", "category", "globalTid", "uint64Value",
             "int64Value", "uint32Value", "int32Value"});
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
    for (const auto& [pid, domain_id, cat, name] : categories) t_.category_names[{domain_name(pid, domain_id), cat}] = name;
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
  std::vector<Name> dense_strings_;              // StringIds by id, when the ids are dense
  std::unordered_map<int64_t, Name> strings_;  // StringIds by id otherwise
  std::unordered_map<const void*, Name> api_names_;  // raw name -> normalized
  std::map<int64_t, std::string> mem_kinds_;
  bool gpu_pid_missing_ = false;
  Ns span_end_ = -1;  // ANALYSIS_DETAILS.stopTime, -1 when the export does not say
  size_t file_bytes_ = 0;
  Trace t_;
};

// --- Writing ---------------------------------------------------------------------------

// The subset of nsys's schema (same table and column names, same enum numbering) that the
// reader uses. Column comments are nsys's.
const char* const kSchema = R"SQL(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, smCount INTEGER);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
  bytes INTEGER NOT NULL, memKind INTEGER, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL,
  graphExecId INTEGER NOT NULL);
CREATE TABLE CUDA_GRAPH_NODE_EVENTS (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL,
  eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (33, 'NvtxCategory', 'NvtxCategory'), (34, 'NvtxMark', 'NvtxMark'),
  (59, 'NvtxPushPopRange', 'NvtxPushPopRange'), (60, 'NvtxStartEndRange', 'NvtxStartEndRange'),
  (75, 'NvtxDomainCreate', 'NvtxDomainCreate');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
  (3, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array'), (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed'),
  (5, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static'),
  (6, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static'), (7, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
  (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'), (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
  (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array'), (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host'),
  (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array'), (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device'),
  (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array'), (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
  (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host'), (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (0, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN', 'Unknown'),
  (1, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', 'Event sync'),
  (2, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync'),
  (3, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync'),
  (4, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', 'Context sync');
)SQL";

class StringTable {
 public:
  int64_t id(const std::string& s) {
    auto [it, inserted] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    return it->second;
  }
  const std::map<std::string, int64_t>& all() const { return ids_; }

 private:
  std::map<std::string, int64_t> ids_;
};

}  // namespace

Trace load_nsys_sqlite(const std::string& path) {
  check_is_sqlite(path);
  return Reader(path).read();
}

namespace {

// The tables the save writes, one function a group; strings get their ids in the order these
// run (StringIds), so the order is part of the file.

// nsys's globalPid: the process in the bits where globalTid has it, no thread.
int64_t global_pid(uint32_t pid) { return global_tid(pid, 0); }

// What the capture is, its threads' names and its GPUs.
void save_process_info(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    s.bind(1, std::string("LAPTIME_TRACE"));
    s.bind(2, t.source.empty() ? std::string("trace") : t.source);
    s.insert();
  }
  {
    Stmt s(db.get(), "INSERT INTO ThreadNames VALUES (?, 0, ?)");
    for (const auto& [thread, name] : t.thread_names) {
      s.bind(1, strings.id(name));
      s.bind(2, global_tid(thread.first, thread.second));
      s.insert();
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?)");
    for (const Gpu& g : t.gpus) {
      s.bind(1, int64_t{g.id});
      s.bind(2, g.name);
      s.bind(3, int64_t{g.sm_count});
      s.insert();
    }
  }
}

std::optional<int64_t> graph_node(const GpuWork& w) {
  if (w.graph_node == kNoGraphNode) return std::nullopt;
  return static_cast<int64_t>(w.graph_node);
}

// Kernels, copies and memsets, with the process in the high bits as nsys writes it.
void save_gpu_work(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Kernel& k : t.kernels) {
      s.insert_row({k.start, k.end, int64_t{k.device}, int64_t{k.stream}, static_cast<int64_t>(k.correlation),
                    global_pid(k.pid), strings.id(k.name), strings.id(k.short_name), int64_t{k.grid.x},
                    int64_t{k.grid.y}, int64_t{k.grid.z}, int64_t{k.block.x}, int64_t{k.block.y},
                    int64_t{k.block.z}},
                   {graph_node(k)});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Memcpy& m : t.memcpys) {
      s.insert_row({m.start, m.end, int64_t{m.device}, int64_t{m.stream}, static_cast<int64_t>(m.correlation),
                    global_pid(m.pid), static_cast<int64_t>(m.bytes), static_cast<int64_t>(m.kind),
                    static_cast<int64_t>(m.src), static_cast<int64_t>(m.dst)},
                   {graph_node(m)});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)");
    for (const Memset& m : t.memsets) {
      s.insert_row({m.start, m.end, int64_t{m.device}, int64_t{m.stream}, static_cast<int64_t>(m.correlation),
                    global_pid(m.pid), int64_t{m.value}, static_cast<int64_t>(m.bytes), static_cast<int64_t>(m.mem)},
                   {graph_node(m)});
    }
  }
}

// The host calls and CUPTI's synchronization records.
void save_api_calls(Db& db, const Trace& t, StringTable& strings) {
  {
    // Driver calls go in the same table, as nsys writes them; the reader tells them apart by name.
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, ?)");
    for (const ApiCall& c : t.api_calls) {
      s.insert_row({c.start, c.end, global_tid(c.pid, c.tid), static_cast<int64_t>(c.correlation),
                    strings.id(c.name), int64_t{c.return_value}});
    }
  }
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, ?, 0, ?, ?, ?, ?, 0)");
    for (const SyncEvent& e : t.syncs) {
      s.insert_row({e.start, e.end, int64_t{e.device}, int64_t{e.stream}, static_cast<int64_t>(e.correlation),
                    global_pid(e.pid), static_cast<int64_t>(e.type)});
    }
  }
}

// The graph tables, as nsys names them (trace/analyses/graph.h): replays traced whole, node creations.
void save_graph_tables(Db& db, const Trace& t, StringTable& strings) {
  {
    Stmt s(db.get(), "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)");
    for (const GraphReplay& g : t.graph_replays)
      s.insert_row({g.start, g.end, int64_t{g.device}, int64_t{g.stream}, static_cast<int64_t>(g.correlation),
                    global_pid(g.pid), int64_t{g.graph}, int64_t{g.exec}});
  }
  Stmt s(db.get(), "INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (?, ?, 77, ?, ?, ?, ?)");
  const int64_t name = t.graph_nodes.empty() ? 0 : strings.id("Graph Node Creation");
  for (const GraphNode& n : t.graph_nodes) {
    const std::optional<int64_t> original =
        n.original == kNoGraphNode ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(n.original));
    s.insert_row({n.created, n.created, global_tid(n.pid, n.tid), name, static_cast<int64_t>(n.id)}, {original});
  }
}

// The ranges, their domains (registered on first use) and the category names.
void save_nvtx(Db& db, const Trace& t) {
  // Domains get ids in order of first appearance; the default domain is 0, as in NVTX.
  std::map<std::pair<uint32_t, std::string>, int64_t> domain_ids;
  Stmt domain(db.get(), "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, ?, ?, ?)");
  auto domain_id = [&](uint32_t pid, const std::string& name) -> int64_t {
    if (name.empty()) return 0;
    auto [it, inserted] = domain_ids.emplace(std::make_pair(pid, name), 0);
    if (inserted) {
      int64_t n = 0;
      for (const auto& [key, id] : domain_ids) n += key.first == pid ? 1 : 0;
      it->second = n;
      domain.bind(1, int64_t{0});
      domain.bind(2, name);
      domain.bind(3, global_tid(pid, 0));
      domain.bind(4, n);
      domain.insert();
    }
    return it->second;
  };
  Stmt s(db.get(),
         "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, category, text, globalTid, endGlobalTid, domainId, "
         "uint64Value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const NvtxEvent& r : t.nvtx) {
    s.bind(1, r.start);
    s.bind(2, r.end);
    s.bind(3, int64_t{r.kind == NvtxKind::PushPop ? 59 : 60});
    s.bind(4, int64_t{r.category});
    s.bind(5, r.text);
    s.bind(6, global_tid(r.pid, r.tid));
    s.bind(7, global_tid(r.pid, r.tid));
    s.bind(8, domain_id(r.pid, r.domain));
    if (r.has_payload) s.bind(9, static_cast<int64_t>(r.payload));
    else s.bind_null(9);
    s.insert();
  }
  // Category names belong to a domain; the trace model keeps them by domain name, so
  // they are written for every process that used the domain.
  Stmt c(db.get(), "INSERT INTO NVTX_EVENTS (start, eventType, category, text, globalTid, domainId) VALUES (0, 33, ?, ?, ?, ?)");
  std::set<uint32_t> pids;
  for (const NvtxEvent& r : t.nvtx) pids.insert(r.pid);
  for (const auto& [key, name] : t.category_names)
    for (uint32_t pid : pids) {
      c.bind(1, int64_t{key.second});
      c.bind(2, name);
      c.bind(3, global_tid(pid, 0));
      c.bind(4, domain_id(pid, key.first));
      c.insert();
    }
}

void save_strings(Db& db, const StringTable& strings) {
  Stmt s(db.get(), "INSERT INTO StringIds VALUES (?, ?)");
  for (const auto& [value, id] : strings.all()) {
    s.bind(1, id);
    s.bind(2, value);
    s.insert();
  }
}

}  // namespace

void save_nsys_sqlite(const Trace& t, const std::string& path) {
  std::remove(path.c_str());  // a fresh file: never append to an older capture
  Db db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;");
  db.exec(kSchema);
  StringTable strings;
  save_process_info(db, t, strings);
  save_gpu_work(db, t, strings);
  save_api_calls(db, t, strings);
  save_graph_tables(db, t, strings);
  save_nvtx(db, t);
  save_strings(db, strings);
  db.exec("COMMIT;");
}

}  // namespace laptime::trace
