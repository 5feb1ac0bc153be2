#include "trace/read/csv_reader.h"

#include <utility>

#include "trace/model/error.h"

namespace laptime::trace {

CsvReader::CsvReader(std::istream& in, std::string source, size_t first_line)
    : CsvReader(in, std::move(source), first_line, Limits{}) {}

CsvReader::CsvReader(std::istream& in, std::string source, size_t first_line, Limits limits)
    : in_(in), source_(std::move(source)), limits_(limits), line_(first_line) {}

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  std::streambuf* buf = in_.rdbuf();
  using Traits = std::char_traits<char>;
  int c = buf->sgetc();
  if (c == Traits::eof()) return false;
  record_line_ = line_;
  std::string field;
  // States: at the start of a field, inside an unquoted one, inside quotes, just after a quote
  // inside quotes (a second quote is a literal one; a comma or line end closes the field).
  enum class State { Start, Plain, Quoted, QuoteInQuoted } state = State::Start;
  auto push = [&] {
    if (fields.size() >= limits_.fields)
      throw TraceError(source_ + ": the record on line " + std::to_string(record_line_) + " has more than " +
                       std::to_string(limits_.fields) + " fields.");
    fields.push_back(std::move(field));
    field.clear();
  };
  auto add = [&](char ch) {
    if (field.size() >= limits_.field_bytes)
      throw TraceError(source_ + ": a field of the record on line " + std::to_string(record_line_) +
                       " is longer than " + std::to_string(limits_.field_bytes >> 20) + " MiB.");
    field += ch;
  };
  while (true) {
    c = buf->sbumpc();
    if (c == Traits::eof()) {
      if (state == State::Quoted)
        throw TraceError(source_ + ": a quoted field that begins on line " + std::to_string(record_line_) +
                         " never closes (the file is cut short or not CSV).");
      push();
      return true;
    }
    const char ch = static_cast<char>(c);
    if (ch == '\n') ++line_;
    switch (state) {
      case State::Start:
        if (ch == '"') {
          state = State::Quoted;
          break;
        }
        state = State::Plain;
        [[fallthrough]];
      case State::Plain:
        if (ch == ',') {
          push();
          state = State::Start;
        } else if (ch == '\n') {
          if (!field.empty() && field.back() == '\r') field.pop_back();
          push();
          return true;
        } else {
          add(ch);
        }
        break;
      case State::Quoted:
        if (ch == '"')
          state = State::QuoteInQuoted;
        else
          add(ch);
        break;
      case State::QuoteInQuoted:
        if (ch == '"') {
          add('"');
          state = State::Quoted;
        } else if (ch == ',') {
          push();
          state = State::Start;
        } else if (ch == '\n' || (ch == '\r' && buf->sgetc() == '\n')) {
          if (ch == '\r') buf->sbumpc(), ++line_;
          push();
          return true;
        } else {
          throw TraceError(source_ + ": line " + std::to_string(line_) +
                           " has text after a closing quote (a field must be all quoted or not at all).");
        }
        break;
    }
  }
}

}  // namespace laptime::trace
