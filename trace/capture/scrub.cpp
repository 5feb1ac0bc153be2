#include "trace/capture/scrub.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "core/os.h"
#include "trace/model/error.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sqlite.h"

namespace laptime::trace {
namespace {

using sqlite::Db;
using sqlite::quoted;
using sqlite::Stmt;

// Columns that hold a StringIds id in the tables kept (nsys's names): the strings kept.
const std::set<std::string> kStringColumns = {"nameId",    "textId",        "jsonTextId",
                                              "shortName", "demangledName", "mangledName"};
// TARGET_INFO_GPU's columns that name one machine's device rather than describe it.
const std::set<std::string> kGpuIdentifiers = {"uuid", "luid", "busLocation", "ctxswDevPath", "ctrlDevPath"};
// The rows of META_DATA_CAPTURE kept: the captured command line and its working folder, which
// `laptime kernels --command --from` rebuilds the command from (trace/ncu/ncu_handoff.h); the
// environment, user name, pid and capture options go.
const char* const kCaptureCommandRows =
    " WHERE name IN ('PROCESS_0:COMMAND', 'PROCESS_0:WORKING_DIR') OR (name GLOB 'PROCESS_0:ARGUMENT_[0-9]*' AND "
    "substr(name, 20) NOT GLOB '*[^0-9]*')";

struct Column {
  std::string name, type;
};

// A declared type as SQLite's affinity reads it, kept when it is plain words ("INTEGER NOT NULL"
// reduced to "INTEGER"): the copy's values keep the storage class they had.
std::string plain_type(const std::string& t) {
  std::string out;
  for (char c : t) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    out += c;
  }
  return out.size() <= 16 ? out : "";
}

std::vector<Column> columns_of(sqlite3* db, const std::string& table) {
  std::vector<Column> out;
  Stmt s(db, "PRAGMA src.table_info(" + quoted(table) + ")");
  while (s.step()) out.push_back({s.text(1), plain_type(s.text(2))});
  return out;
}

bool has_name_and_value(sqlite3* db, const std::string& table) {
  bool name = false, value = false;
  for (const Column& c : columns_of(db, table)) {
    name = name || c.name == "name";
    value = value || c.name == "value";
  }
  return name && value;
}

// The SELECT list copying `table`: every column as it is, but the GPU's identifiers.
std::string select_list(const std::string& table, const std::vector<Column>& cols) {
  std::string list;
  for (const Column& c : cols) {
    const bool blank = table == "TARGET_INFO_GPU" && kGpuIdentifiers.count(c.name);
    list += (list.empty() ? "" : ", ") + (blank ? std::string("NULL") : quoted(c.name));
  }
  return list;
}

// The ids of StringIds that a kept table's string column names, as a subquery.
std::string kept_string_ids(sqlite3* db, const std::vector<std::string>& kept) {
  std::string ids;
  for (const std::string& table : kept) {
    if (table == "StringIds") continue;
    for (const Column& c : columns_of(db, table))
      if (kStringColumns.count(c.name))
        ids += (ids.empty() ? "" : " UNION ") + std::string("SELECT ") + quoted(c.name) + " FROM src." + quoted(table);
  }
  return ids.empty() ? "SELECT NULL" : ids;
}

void copy_table(Db& out, const std::string& table, const std::string& where) {
  const std::vector<Column> cols = columns_of(out.get(), table);
  std::string create, names;
  for (const Column& c : cols) {
    create += (create.empty() ? "" : ", ") + quoted(c.name) + (c.type.empty() ? "" : " " + c.type);
    names += (names.empty() ? "" : ", ") + quoted(c.name);
  }
  out.exec("CREATE TABLE main." + quoted(table) + " (" + create + ")");
  out.exec("INSERT INTO main." + quoted(table) + " (" + names + ") SELECT " + select_list(table, cols) + " FROM src." +
           quoted(table) + where);
}

size_t count(sqlite3* db, const std::string& sql) {
  Stmt s(db, sql);
  return s.step() ? static_cast<size_t>(s.i64(0)) : 0;
}

// Environment rows in the database attached as `schema` ("main" or "src").
size_t environment_rows_in(sqlite3* db, const std::string& schema) {
  std::set<std::string> tables;
  Stmt s(db, "SELECT name FROM " + schema + ".sqlite_master WHERE type = 'table'");
  while (s.step()) tables.insert(s.text(0));
  size_t n = 0;
  if (tables.count("META_DATA_CAPTURE"))
    n += count(db, "SELECT count(*) FROM " + schema + ".META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'");
  if (tables.count("TARGET_INFO_SYSTEM_ENV"))
    n += count(db, "SELECT count(*) FROM " + schema + ".TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'");
  return n;
}

}  // namespace

ScrubResult scrub_trace(const std::string& in, const std::string& temp) {
  check_is_sqlite(in);
  Db out(temp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI);
  out.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
  {
    Stmt attach(out.get(), "ATTACH DATABASE ? AS src");
    attach.bind(1, sqlite::read_only_uri(in));
    attach.insert();
  }
  ScrubResult r;
  r.environment_rows = environment_rows_in(out.get(), "src");
  std::vector<std::string> kept;
  {
    Stmt s(out.get(),
           "SELECT name, type, upper(substr(coalesce(sql, ''), 1, 14)) FROM src.sqlite_master WHERE type "
           "IN ('table', 'view') ORDER BY rowid");
    while (s.step()) {
      const std::string name = s.text(0);
      if (starts_with(name, "sqlite_")) continue;
      // The command's table is kept when it is a table with nsys's columns (kernels reads nothing
      // else: a view, or a table of another shape, goes as unread).
      const bool command_table = name == "META_DATA_CAPTURE" && s.text(1) == "table" && s.text(2) != "CREATE VIRTUAL" &&
                                 has_name_and_value(out.get(), name);
      if (!table_read_by_laptime(name) && !command_table) {
        ++r.tables_dropped;
        continue;
      }
      if (s.text(1) != "table" || s.text(2) == "CREATE VIRTUAL")
        throw TraceError(in + " is not an Nsight Systems export: its " + name + " is " +
                         (s.text(1) != "table" ? "a view" : "a virtual table") + ", where nsys writes a table.");
      kept.push_back(name);
    }
  }
  if (std::none_of(kept.begin(), kept.end(),
                   [](const std::string& t) { return starts_with(t, "CUPTI_ACTIVITY_KIND_") || t == "NVTX_EVENTS"; }))
    throw TraceError(in +
                     " is not an Nsight Systems export with CUDA or NVTX data: it has none of the "
                     "CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables, so there is nothing to scrub for laptime.");
  out.exec("BEGIN");
  const std::string string_ids = kept_string_ids(out.get(), kept);
  for (const std::string& table : kept) {
    std::string where;
    if (table == "StringIds") where = " WHERE id IN (" + string_ids + ")";
    if (table == "META_DATA_EXPORT")
      where =
          " WHERE substr(name, 1, 15) = 'EXPORT_PRODUCT_' OR substr(name, 1, 14) = 'EXPORT_SCHEMA_' OR "
          "name = 'LAPTIME_TRACE'";
    if (table == "META_DATA_CAPTURE") where = kCaptureCommandRows;
    copy_table(out, table, where);
  }
  for (const std::string& table : kept)
    if (table == "META_DATA_EXPORT")
      out.exec(
          "INSERT INTO main.META_DATA_EXPORT (name, value) VALUES ('LAPTIME_SCRUBBED', 'environment, host, "
          "user, the export''s paths, program output and device identifiers removed by laptime scrub; the "
          "captured command line and its working folder kept')");
  r.strings_dropped = std::find(kept.begin(), kept.end(), "StringIds") == kept.end()
                          ? 0
                          : count(out.get(),
                                  "SELECT (SELECT count(*) FROM src.StringIds) - "
                                  "(SELECT count(*) FROM main.StringIds)");
  out.exec("COMMIT");
  out.exec("DETACH DATABASE src");
  r.tables_kept = kept.size();
  return r;
}

size_t environment_rows(const std::string& path) {
  try {
    check_is_sqlite(path);
    Db db(path, SQLITE_OPEN_READONLY, sqlite::read_only_uri(path));
    return environment_rows_in(db.get(), "main");
  } catch (const TraceError&) {
    return 0;  // not a trace this can read: the reader says why
  }
}

std::string environment_note(const std::string& path) {
  const size_t n = environment_rows(path);
  if (n == 0) return "";
  return "the trace records the capturing process's environment (" + std::to_string(n) + (n == 1 ? " row" : " rows") +
         ": variables that can hold tokens, host names and paths); `laptime scrub TRACE OUT` writes a copy to share.";
}

}  // namespace laptime::trace
