#include "trace/model/format.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace laptime::trace::detail {

std::string format(const char* f, ...) {
  // Any length: C++ kernel names with their template arguments run past any fixed buffer.
  va_list args, again;
  va_start(args, f);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, f, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, f, again);
  va_end(again);
  return out;
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string bytes_str(uint64_t b) {
  if (b >= (1ull << 30)) return format("%.1f GiB", b / double(1ull << 30));
  if (b >= (1ull << 20)) return format("%.1f MiB", b / double(1ull << 20));
  if (b >= (1ull << 10)) return format("%.1f KiB", b / double(1ull << 10));
  return std::to_string(b) + " B";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

bool has_any(const std::string& s, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (has(s, n)) return true;
  return false;
}

std::string fold_indices(const std::string& range) {
  std::string out;
  size_t start = 0;
  while (start <= range.size()) {
    size_t dot = range.find('.', start);
    if (dot == std::string::npos) dot = range.size();
    const std::string part = range.substr(start, dot - start);
    const bool digits =
        !part.empty() && std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!out.empty()) out += '.';
    // PyTorch emit_nvtx's counters, "aten::mm, seq = 12, op_id = 345": every number after " = "
    // folds, wherever it sits (the last one also by the rule below).
    std::string counted;
    for (size_t i = 0; i < part.size();) {
      const bool after_equals = i >= 3 && part.compare(i - 3, 3, " = ") == 0;
      if (after_equals && std::isdigit(static_cast<unsigned char>(part[i]))) {
        while (i < part.size() && std::isdigit(static_cast<unsigned char>(part[i]))) ++i;
        counted += '*';
      } else {
        counted += part[i++];
      }
    }
    if (counted != part && !digits) {
      out += counted;
      start = dot + 1;
      continue;
    }
    // "Layer 3", "ProfilerStep#12": a number after a space or # folds too (not after _: ln_1 is a layer).
    size_t tail = part.size();
    while (tail > 0 && std::isdigit(static_cast<unsigned char>(part[tail - 1]))) --tail;
    const bool numbered = tail > 0 && tail < part.size() && std::string(" #").find(part[tail - 1]) != std::string::npos;
    out += digits ? "*" : numbered ? part.substr(0, tail) + "*" : part;
    start = dot + 1;
  }
  return out;
}

Name range_name(const Trace& t, int range) { return range < 0 ? t.names->intern("(no range)") : t.nvtx[range].text; }

std::string range_text(const Trace& t, int range) { return range < 0 ? "(no range)" : t.nvtx[range].text.str(); }

std::string number_runs(const std::vector<uint64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t k = i;
    while (k + 1 < v.size() && v[k + 1] == v[k] + 1) ++k;
    out += (out.empty() ? "" : ", ") + std::to_string(v[i]) + (k > i ? "-" + std::to_string(v[k]) : "");
    i = k + 1;
  }
  return out;
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;  // count every byte but UTF-8 continuations
  return w;
}

void print_table(std::FILE* out, const std::vector<std::vector<std::string>>& rows, const std::string& align,
                 int indent) {
  std::vector<size_t> w(align.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], display_width(r[c]));
  for (const auto& r : rows) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(w[c] - display_width(r[c]), ' ');
      const bool last = c + 1 == r.size();
      line += align[c] == 'r' ? pad + r[c] : (last ? r[c] : r[c] + pad);
      if (!last) line += "  ";
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

void print_wrapped(std::FILE* out, const std::string& text, size_t indent, size_t columns) {
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t sp = text.find(' ', start);
    if (sp == std::string::npos) sp = text.size();
    const std::string word = text.substr(start, sp - start);
    if (!line.empty() && indent + display_width(line) + 1 + display_width(word) > columns) {
      std::fprintf(out, "%*s%s\n", static_cast<int>(indent), "", line.c_str());
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = sp + 1;
  }
  if (!line.empty()) std::fprintf(out, "%*s%s\n", static_cast<int>(indent), "", line.c_str());
}

void print_more_rows(std::FILE* out, size_t omitted, int indent, const char* what) {
  if (omitted) std::fprintf(out, "%*s... %zu more %s (--top 0 for all)\n", indent, "", omitted, what);
}

}  // namespace laptime::trace::detail
