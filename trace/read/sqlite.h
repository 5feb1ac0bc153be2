// A minimal RAII layer over the SQLite C API, for the nsys reader (read/nsys_sqlite.cpp), the
// writer laptime's own captures use (capture/nsys_writer.cpp) and the scrubber. Header-only but
// for read_only_uri: the reader calls these per cell of millions of rows, so they stay inline.
// Every failure is a TraceError with one sentence.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model/error.h"
#include "trace/model/progress.h"
#include "trace/model/text.h"

namespace laptime::trace::sqlite {

// An SQL identifier, double-quoted with every " inside doubled (trace/model/text.h).
inline std::string quoted(const std::string& identifier) { return sql_identifier(identifier); }

// Whether `tail` (what sqlite3_prepare_v2 left after the statement it compiled) holds nothing
// but white space and comments: one statement per call, never a string of several.
bool only_white_space(const char* tail);

// How a trace is opened for reading: an URI with the path percent-encoded, read-only and, unless
// a write-ahead log beside it holds pages the file lacks, immutable, so SQLite neither creates
// -wal and -shm files beside a WAL-mode trace nor needs a writable folder for them.
std::string read_only_uri(const std::string& path);
// An URI for `path` with the query `query` ("mode=rwc"): the path percent-encoded, so a path that
// happens to begin "file:" or hold '?' or '#' is the file it names.
std::string file_uri(const std::string& path, const std::string& query);

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

  // Runs one statement (no rows expected). SQL text is never run as a string of statements:
  // one that holds a second is refused before anything runs.
  void exec(const std::string& sql) const;

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  // One statement: a string holding a second after it is refused (throws), never run.
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &st_, &tail) != SQLITE_OK)
      throw TraceError("SQLite cannot prepare a statement (" + std::string(sqlite3_errmsg(db)) +
                       "): " + escape_name(sql.substr(0, 80)));
    if (!only_white_space(tail)) {
      sqlite3_finalize(st_);
      st_ = nullptr;
      throw TraceError("SQLite was handed more than one statement at once, which laptime never runs: " +
                       escape_name(sql.substr(0, 80)));
    }
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) {
      Progress::row();  // long reads show their rows (trace/model/progress.h)
      return true;
    }
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
    if (sqlite3_step(st_) != SQLITE_DONE)
      throw TraceError("SQLite write failed: " + std::string(sqlite3_errmsg(db_)) + ".");
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
      if (s.text(1) == "view")
        kinds_[s.text(0)] = "a view";
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
    Stmt s(db_, "SELECT MAX(rowid) FROM " + sqlite::quoted(table));
    const int64_t n = s.step() && s.type(0) == SQLITE_INTEGER ? s.i64(0) : 0;
    return static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(n, static_cast<int64_t>(file_bytes / 8))));
  }
  bool has(const std::string& table) const { return tables_.count(table) > 0; }
  bool has(const std::string& table, const std::string& column) {
    auto it = columns_.find(table);
    if (it == columns_.end()) {
      std::set<std::string> cols;
      if (has(table)) {
        Stmt s(db_, "PRAGMA table_info(" + sqlite::quoted(table) + ")");
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
      case SQLITE_INTEGER:
        return Cell::Integer;
      case SQLITE_NULL:
        return c.present ? Cell::Null : Cell::Absent;
      default:
        return Cell::NotInteger;  // text, real or blob: SQLite would read "abc" as 0
    }
  }
  int64_t i64(const char* c, int64_t def = 0) const {
    const int i = at(col(c));
    return stmt_.type(i) == SQLITE_NULL ? def : stmt_.i64(i);
  }
  std::string text(const char* c) const { return stmt_.text(at(col(c))); }
  std::string_view view(const char* c) const { return stmt_.view(at(col(c))); }
  int type(const char* c) const { return stmt_.type(at(col(c))); }
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
        throw TraceError("table " + table + " has no `" + name +
                         "` column: this SQLite file is not an Nsight Systems "
                         "export laptime can read.");
      sql += (i ? ", " : "") + (present ? sqlite::quoted(name) : "NULL AS " + sqlite::quoted(name));
      index_[name] = static_cast<int>(i);
      if (present) present_.insert(name);
    }
    resolved_.reserve(2 * columns.size() + 8);  // references col() returns stay valid in a reader's loop
    return sql + " FROM " + sqlite::quoted(table);
  }

  std::map<std::string, int> index_;  // filled by build() before stmt_ is constructed
  std::set<std::string> present_;
  mutable std::vector<Col> resolved_;
  mutable size_t last_ = 0;
  Stmt stmt_;
};

}  // namespace laptime::trace::sqlite
