// `nsys stats --format csv` output, read for tests that check the analyzer against nsys's own
// sums (RFC 4180 as nsys writes it: commas, fields in double quotes when they hold commas).
#pragma once

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace laptime::nsys_csv {

// Rows as maps from the header's column names.
inline std::vector<std::map<std::string, std::string>> table(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> row(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
        row.back() += line[++i];
      else if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        row.emplace_back();
      else
        row.back() += c;
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> m;
    for (size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c) m[rows[0][c]] = rows[r][c];
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace laptime::nsys_csv
