// --top N: how many rows the tables of `laptime analyze` and `laptime diff` show. One rule for
// both commands and every per-kernel and per-layer table (analyze's kernels and layers, and its
// gaps and synchronization calls; diff's layers and their kernel changes), so that a trace with a
// million distinct kernels or layer ranges gives a report of a page, not of a million lines:
//   text  the first N rows, kDefaultTop when --top is not given, every row for --top 0; a line
//         under the table says how many rows were left out ("... 12 more rows (--top 0 for all)").
//   JSON  every row unless --top is given: a CI job that reads the JSON sees every layer without
//         a flag (a layer past the 15th that turned SLOWER is not lost). With --top N, the first N,
//         and "<array>_omitted" beside the array says how many were left out (absent when none
//         were). analyze's largest_gaps keep their older rule, the text's cut (gap_count is
//         the total).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>

namespace laptime::trace {

constexpr int kDefaultTop = 15;

// The rows a text table shows out of `total`.
inline size_t text_rows(std::optional<int> top, size_t total) {
  const int n = top.value_or(kDefaultTop);
  return n <= 0 ? total : std::min(total, static_cast<size_t>(n));
}

// The rows a JSON array holds out of `total`.
inline size_t json_rows(std::optional<int> top, size_t total) { return top ? text_rows(top, total) : total; }

}  // namespace laptime::trace
