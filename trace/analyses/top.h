// --top N: how many rows the tables of `laptime analyze` and `laptime diff` show. One rule for
// both commands and every per-kernel and per-layer table (analyze's kernels and layers, and its
// gaps and synchronization calls; diff's layers and their kernel changes), so that a trace with a
// million distinct kernels or layer ranges gives a report of a page, not of a million lines:
//   text  the first N rows, kDefaultTop when --top is not given, every row for --top 0; a line
//         under the table says how many rows were left out ("... 12 more rows (--top 0 for all)").
//   JSON  tables of the trace's shape (kernels, layers, diff's rows): every row unless --top is
//         given: a CI job that reads the JSON sees every layer without a flag (a layer past the
//         15th that turned SLOWER is not lost). Lists that grow with the trace's length instead
//         (analyze's synchronization calls, inside the steady iterations and outside them, and its
//         ranges as they are, an iteration's own range among them): the kMaxListRows first (the
//         costliest: each list is sorted so) unless --top is given, so that a capture of a million
//         kernels gives a report of a few MB. With --top N, the first N of either kind; --top 0,
//         every row. "<array>_omitted" beside the array says what was left out (absent when
//         nothing was): how many, and for the calls their host wait too ({count, host_wait_ns}).
//         The iterations stay whole (one row an iteration: the overview draws each). analyze's
//         largest_gaps keep their older rule, the text's cut (gap_count is the total).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>

namespace laptime::trace {

constexpr int kDefaultTop = 15;
constexpr size_t kMaxListRows = 1000;

// The rows a text table shows out of `total`.
inline size_t text_rows(std::optional<int> top, size_t total) {
  const int n = top.value_or(kDefaultTop);
  return n <= 0 ? total : std::min(total, static_cast<size_t>(n));
}

// The rows a JSON array of a table of the trace's shape holds out of `total`.
inline size_t json_rows(std::optional<int> top, size_t total) { return top ? text_rows(top, total) : total; }

// The rows a JSON list that grows with the trace's length holds out of `total`.
inline size_t json_list_rows(std::optional<int> top, size_t total) {
  return top ? text_rows(top, total) : std::min(total, kMaxListRows);
}

}  // namespace laptime::trace
