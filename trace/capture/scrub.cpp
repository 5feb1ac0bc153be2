#include "trace/capture/scrub.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/os.h"
#include "trace/model/error.h"
#include "trace/model/text.h"
#include "trace/read/nsys_sqlite.h"
#include "trace/read/sqlite.h"

namespace laptime::trace {
namespace {

using sqlite::Db;
using sqlite::Schema;
using sqlite::Stmt;

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

// The input's columns of `table` (a name from tables_read()), in its order.
std::vector<Column> columns_of(sqlite3* src, const std::string& table) {
  std::vector<Column> out;
  Stmt s(src, "PRAGMA table_info(" + sql_identifier(table) + ")");
  while (s.step()) out.push_back({s.text(1), plain_type(s.text(2))});
  return out;
}

bool reads_column(const TableRead& t, const std::string& column) {
  return std::any_of(t.columns.begin(), t.columns.end(), [&](const ColumnRead& c) { return column == c.name; });
}

size_t count(sqlite3* db, const std::string& sql) {
  Stmt s(db, sql);
  return s.step() ? static_cast<size_t>(s.i64(0)) : 0;
}

bool plain_table(const Schema& schema, const std::string& table) {
  return schema.has(table) && schema.not_a_table(table).empty();
}

// Environment rows of the database `db` (its main schema described by `schema`).
size_t environment_rows_in(sqlite3* db, Schema& schema) {
  size_t n = 0;
  if (plain_table(schema, "META_DATA_CAPTURE") && schema.has("META_DATA_CAPTURE", "name"))
    n += count(db, "SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'");
  if (plain_table(schema, "TARGET_INFO_SYSTEM_ENV") && schema.has("TARGET_INFO_SYSTEM_ENV", "name"))
    n += count(db, "SELECT count(*) FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'");
  return n;
}

// `rows` (names as TableRead::rows has them) as a WHERE clause over `name`, its values bound from
// parameter 1 on: exact names by equality, NAME# by prefix and digits.
struct RowFilter {
  std::string where;
  std::vector<std::string> values;
};
RowFilter row_filter(const std::vector<const char*>& rows) {
  RowFilter f;
  std::string exact;
  for (const char* r : rows) {
    const std::string name = r;
    if (name.back() != '#') {
      f.values.push_back(name);
      exact += (exact.empty() ? "" : ", ") + std::string("?") + std::to_string(f.values.size());
      continue;
    }
    f.values.push_back(name.substr(0, name.size() - 1));
    const std::string p = "?" + std::to_string(f.values.size());
    f.where += " OR (substr(name, 1, length(" + p + ")) = " + p + " AND length(name) > length(" + p +
               ") AND substr(name, length(" + p + ") + 1) NOT GLOB '*[^0-9]*')";
  }
  f.where = " WHERE name IN (" + exact + ")" + f.where;
  return f;
}

// A path's last component: the program's name without the folders it was run from.
std::string base_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Copies one table laptime reads: the columns it reads that the input has, in the input's order,
// and, of a table of name and value rows, the rows `rows` names (all rows when it names none).
void copy_table(Db& out, sqlite3* src, const TableRead& t, const std::vector<const char*>& rows, ScrubResult& r) {
  std::vector<Column> cols;
  for (Column& c : columns_of(src, t.name)) {
    if (reads_column(t, c.name))
      cols.push_back(std::move(c));
    else
      ++r.columns_dropped;
  }
  r.columns_kept += cols.size();
  const std::string table = sql_identifier(t.name);
  std::string create, names;
  for (const Column& c : cols) {
    create += (create.empty() ? "" : ", ") + sql_identifier(c.name) + (c.type.empty() ? "" : " " + c.type);
    names += (names.empty() ? "" : ", ") + sql_identifier(c.name);
  }
  if (cols.empty()) {
    // None of the columns laptime reads: the rows still count (the reader sees each as a row of
    // NULLs and says so), so one column of NULLs carries them.
    out.exec("CREATE TABLE main." + table + " (\"_\")");
    out.exec("INSERT INTO main." + table + " (\"_\") SELECT NULL FROM src." + table);
    return;
  }
  out.exec("CREATE TABLE main." + table + " (" + create + ")");
  const bool by_name = !t.rows.empty();
  if (by_name && std::none_of(cols.begin(), cols.end(), [](const Column& c) { return c.name == "name"; }))
    return;  // no row can be told apart: none is copied (the reader cannot read them either)
  const RowFilter f = by_name ? row_filter(rows) : RowFilter{};
  Stmt insert(out.get(),
              "INSERT INTO main." + table + " (" + names + ") SELECT " + names + " FROM src." + table + f.where);
  for (size_t i = 0; i < f.values.size(); ++i) insert.bind(static_cast<int>(i + 1), f.values[i]);
  insert.insert();
  if (by_name)
    r.metadata_rows_dropped +=
        count(out.get(), "SELECT count(*) FROM src." + table) - count(out.get(), "SELECT count(*) FROM main." + table);
}

// StringIds: the rows a kept string column names, found one column at a time (no compound
// SELECT, which SQLite caps at 500 terms): every row copied, then those no kept column names deleted.
void copy_strings(Db& out, sqlite3* src, Schema& schema, const std::vector<const TableRead*>& kept, ScrubResult& r) {
  copy_table(out, src, *table_read("StringIds"), {}, r);
  r.strings_in = r.strings_kept = count(out.get(), "SELECT count(*) FROM main.StringIds");
  if (!schema.has("StringIds", "id")) return;
  out.exec("CREATE TEMP TABLE kept_ids (id INTEGER PRIMARY KEY)");
  for (const TableRead* t : kept)
    for (const ColumnRead& c : t->columns)
      if (c.string_id && schema.has(t->name, c.name))
        out.exec("INSERT OR IGNORE INTO temp.kept_ids SELECT " + sql_identifier(c.name) + " FROM src." +
                 sql_identifier(t->name) + " WHERE typeof(" + sql_identifier(c.name) + ") = 'integer'");
  out.exec("DELETE FROM main.StringIds WHERE id NOT IN (SELECT id FROM temp.kept_ids)");
  out.exec("DROP TABLE temp.kept_ids");
  r.strings_kept = count(out.get(), "SELECT count(*) FROM main.StringIds");
}

}  // namespace

ScrubResult scrub_trace(const std::string& in, const std::string& temp, CommandLine command) {
  check_is_sqlite(in);
  ScrubResult r;
  r.command_mode = command;
  Db src(in, SQLITE_OPEN_READONLY, sqlite::read_only_uri(in));
  Schema schema(src.get());
  r.environment_rows = environment_rows_in(src.get(), schema);
  // The tables to keep: those laptime reads, in the input's order; a view or a virtual table in
  // their place means the file is not nsys's (the reader refuses it too).
  std::vector<const TableRead*> kept;
  {
    Stmt s(src.get(), "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY rowid");
    while (s.step()) {
      const std::string name = s.text(0);
      if (starts_with(name, "sqlite_")) continue;
      ++r.tables_in;
      const TableRead* t = table_read(name);
      if (!t) continue;
      const std::string kind = schema.not_a_table(name);
      if (name == "META_DATA_CAPTURE" && (!kind.empty() || !schema.has(name, "name") || !schema.has(name, "value")))
        continue;  // not nsys's table of the command: nothing reads it (captured_command neither)
      if (!kind.empty())
        throw TraceError(in + " is not an Nsight Systems export: its " + escape_name(name) + " is " + kind +
                         ", where nsys writes a table.");
      kept.push_back(t);
    }
  }
  if (std::none_of(kept.begin(), kept.end(), [](const TableRead* t) {
        return starts_with(t->name, "CUPTI_ACTIVITY_KIND_") || std::string(t->name) == "NVTX_EVENTS";
      }))
    throw TraceError(in +
                     " is not an Nsight Systems export with CUDA or NVTX data: it has none of the "
                     "CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables, so there is nothing to scrub for laptime.");
  const CapturedCommand recorded = captured_command(in);
  r.command = !recorded.argv.empty();
  if (r.command) {
    r.program = command == CommandLine::Keep ? recorded.argv.front() : base_name(recorded.argv.front());
    r.arguments = recorded.argv.size() - 1;
    r.working_dir = !recorded.working_dir.empty();
  }

  Db out(temp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, sqlite::file_uri(temp, "mode=rw"));
  out.exec("PRAGMA journal_mode = OFF");
  out.exec("PRAGMA synchronous = OFF");
  {
    Stmt attach(out.get(), "ATTACH DATABASE ? AS src");
    attach.bind(1, sqlite::read_only_uri(in));
    attach.insert();
  }
  out.exec("BEGIN");
  for (const TableRead* t : kept) {
    r.tables_kept.push_back(t->name);
    const std::string name = t->name;
    if (name == "StringIds") {
      copy_strings(out, src.get(), schema, kept, r);
    } else if (name == "META_DATA_CAPTURE" && command == CommandLine::BaseName) {
      copy_table(out, src.get(), *t, {"PROCESS_0:COMMAND"}, r);
      Stmt base(out.get(), "UPDATE main.META_DATA_CAPTURE SET value = ? WHERE name = 'PROCESS_0:COMMAND'");
      base.bind(1, r.program);
      base.insert();
      if (r.command) {
        Stmt mark(out.get(), "INSERT INTO main.META_DATA_CAPTURE (name, value) VALUES (?, ?)");
        mark.bind(1, std::string(kCommandScrubbedRow));
        mark.bind(2, std::string("the captured command's arguments and working folder removed by laptime scrub"));
        mark.insert();
      }
    } else {
      copy_table(out, src.get(), *t, t->rows, r);
    }
  }
  if (std::any_of(kept.begin(), kept.end(),
                  [](const TableRead* t) { return std::string(t->name) == "META_DATA_EXPORT"; }) &&
      schema.has("META_DATA_EXPORT", "name") && schema.has("META_DATA_EXPORT", "value")) {
    Stmt mark(out.get(), "INSERT INTO main.META_DATA_EXPORT (name, value) VALUES ('LAPTIME_SCRUBBED', ?)");
    mark.bind(1, std::string("laptime scrub kept the tables and columns laptime reads and nothing else") +
                     (command == CommandLine::Keep ? "; the captured command line and its working folder kept"
                                                   : "; of the captured command, the program's name"));
    mark.insert();
  }
  out.exec("COMMIT");
  out.exec("DETACH DATABASE src");
  return r;
}

size_t environment_rows(const std::string& path) {
  try {
    check_is_sqlite(path);
    Db db(path, SQLITE_OPEN_READONLY, sqlite::read_only_uri(path));
    Schema schema(db.get());
    return environment_rows_in(db.get(), schema);
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
