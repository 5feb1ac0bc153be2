// A bounded reader of CSV records (RFC 4180: comma-separated fields, a field in double quotes
// may hold commas, line breaks and doubled quotes ""), one record at a time from a stream.
//
// Why not a library: the files it reads (Nsight Compute's `--csv` pages) are plain RFC 4180,
// and the one system CSV library on Debian (libcsv) is not on every machine that builds the
// CUDA-free analyzer. What a library would add is bounds and clear errors, and those are here:
// a field longer than Limits::field_bytes, a record with more than Limits::fields fields, or a
// quote that never closes is one sentence naming the line, never unbounded memory. No recursion:
// one state machine over the bytes.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace laptime::trace {

class CsvReader {
 public:
  struct Limits {
    size_t field_bytes = 1u << 20;  // 1 MiB: ncu's longest cells (NVTX stacks, C++ names) are a few KiB
    size_t fields = 100000;         // columns of one record (ncu's raw page: ~800 with seven sections)
  };
  // `source` names the input in messages ("run.csv"); `first_line` is the line number of the
  // stream's first byte (the caller may have skipped lines before it).
  CsvReader(std::istream& in, std::string source, size_t first_line = 1);
  CsvReader(std::istream& in, std::string source, size_t first_line, Limits limits);

  // The next record into `fields` (cleared first); false at the end of the input. A final line
  // without a line break is a record; an empty line is a record of one empty field. Throws
  // TraceError with one sentence on a malformed or over-long record.
  bool next(std::vector<std::string>& fields);

  // The line on which the record last returned by next() began.
  size_t record_line() const { return record_line_; }

 private:
  std::istream& in_;
  std::string source_;
  Limits limits_;
  size_t line_;
  size_t record_line_ = 0;
};

}  // namespace laptime::trace
