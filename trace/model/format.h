// Small formatting and naming helpers shared by the analysis steps and the writers (internal
// to trace/: no writer outside it needs them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "trace/model/text.h"  // detail::clip, with the escaping it goes with
#include "trace/model/trace.h"

namespace laptime::trace::detail {

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string ms(Ns ns) { return format("%.3f", ns / 1e6); }
inline std::string us(Ns ns) { return format("%.1f", ns / 1e3); }
std::string plural(size_t n, const std::string& one, const std::string& many);
std::string bytes_str(uint64_t b);
std::string lower(std::string s);
bool has(const std::string& s, const char* needle);
bool has_any(const std::string& s, std::initializer_list<const char*> needles);

// "h.3.attn" -> "h.*.attn", "layer2.1.conv2" -> "layer2.*.conv2", "Layer 3" -> "Layer *",
// "Forward Pass Iter 7" -> "Forward Pass Iter *": the same layer in every block, so a 12-block
// model reads as one row per layer kind.
std::string fold_indices(const std::string& range);

// A range's text, "(no range)" for -1.
std::string range_text(const Trace& t, int range);
// The same as an interned Name.
Name range_name(const Trace& t, int range);

// Iteration numbers as runs: {1,2,3,5,7,8} -> "1-3, 5, 7-8".
std::string number_runs(const std::vector<uint64_t>& sorted);

// Display width of UTF-8 text ("µs" is two bytes, one column).
size_t display_width(const std::string& s);
// `rows` as an aligned text table, 'l' or 'r' per column in `align`, every line indented by
// `indent` spaces and the columns two apart; the last column is not padded.
void print_table(std::FILE* out, const std::vector<std::vector<std::string>>& rows, const std::string& align,
                 int indent);
// `text`'s words (split at single spaces) filled into lines of at most `columns` display
// columns, each indented by `indent`.
void print_wrapped(std::FILE* out, const std::string& text, size_t indent, size_t columns = 100);
// Under a table cut by --top (trace/analyses/top.h): "... N more rows (--top 0 for all)", indented; nothing
// when none were left out. `what` names the rows ("rows", "layers with kernel changes").
void print_more_rows(std::FILE* out, size_t omitted, int indent, const char* what = "rows");

}  // namespace laptime::trace::detail
