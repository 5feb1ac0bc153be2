// docs/ERRORS.md cannot drift from the binary: every row whose Input begins `$ ` is a shell line,
// run here as printed (in a fresh empty folder; `laptime` the built binary on PATH, $F the
// fixtures, $N the stand-in nsys, LAPTIME_CACHE_DIR an empty folder), and its exit code and
// message checked: the output, whitespace runs read as one space, holds the message; for a
// failure, the last line is `laptime: ` and the message, and every line begins `laptime: `.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"

namespace laptime {
namespace {

namespace fs = std::filesystem;
using testing_support::run_shell;
using trace::testing_support::source_dir;

struct Row {
  size_t line = 0;
  std::string command, message;
  int exit = 0;
};

// The text of a code span at the start of `cell` (`x`, or ``x `y` z`` for text with backticks),
// "" when the cell does not start with one.
std::string code_span(const std::string& cell) {
  size_t k = 0;
  while (k < cell.size() && cell[k] == '`') ++k;
  if (k == 0) return "";
  const std::string fence(k, '`');
  for (size_t at = cell.find(fence, k); at != std::string::npos; at = cell.find(fence, at + 1)) {
    const bool longer = (at + k < cell.size() && cell[at + k] == '`') || cell[at - 1] == '`';
    if (!longer) {
      std::string text = cell.substr(k, at - k);
      if (k > 1 && !text.empty() && text.front() == ' ') text.erase(0, 1);
      if (k > 1 && !text.empty() && text.back() == ' ') text.pop_back();
      return text;
    }
  }
  return "";
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

std::vector<Row> runnable_rows() {
  std::ifstream f(source_dir() + "/docs/ERRORS.md");
  std::vector<Row> rows;
  std::string line;
  for (size_t n = 1; std::getline(f, line); ++n) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> cells = cells_of(line);
    if (cells.size() < 4) continue;
    const std::string input = code_span(cells[0]);
    if (input.rfind("$ ", 0) != 0) continue;
    Row r;
    r.line = n;
    r.command = input.substr(2);
    r.message = code_span(cells[1]).empty() ? cells[1] : code_span(cells[1]);
    r.exit = std::atoi(cells[2].c_str());
    rows.push_back(r);
  }
  return rows;
}

std::string squeezed(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

TEST(ErrorsTable, EveryRunnableRowAsPrinted) {
  const std::vector<Row> rows = runnable_rows();
  ASSERT_GE(rows.size(), 25u) << "docs/ERRORS.md lost its runnable rows";
  const std::string bin = fs::path(LAPTIME_BINARY).parent_path().string();
  for (const Row& r : rows) {
    SCOPED_TRACE("docs/ERRORS.md line " + std::to_string(r.line) + ": " + r.command);
#ifdef LAPTIME_HOST_ONLY
    // A GPU subcommand's refusal needs the CUDA build's module; the host-only build says it needs
    // that build (HostCli.GpuSubcommandsSayTheyNeedTheCudaBuild).
    bool gpu_side = false;
    for (const char* c : {"laptime lab ", "laptime bench ", "laptime forward ", "laptime peak "})
      gpu_side |= r.command.find(c) != std::string::npos;
    if (gpu_side) continue;
#endif
    const fs::path dir = fs::path(testing::TempDir()) / ("laptime_errors_row_" + std::to_string(r.line));
    fs::remove_all(dir);
    fs::create_directories(dir / "cache");
    std::ofstream(dir / "row.sh") << "export F='" << source_dir() << "/tests/fixtures'\n"
                                  << "export N='" << source_dir() << "/tests/support/fake-nsys'\n"
                                  << "export LAPTIME_CACHE_DIR='" << (dir / "cache").string() << "'\n"
                                  << "export PATH='" << bin << "':\"$PATH\"\n"
                                  << "cd '" << dir.string() << "' || exit 99\n"
                                  << r.command << "\n";
    const auto got = run_shell("sh '" + (dir / "row.sh").string() + "' 2>&1");
    EXPECT_EQ(got.status, r.exit) << got.out;
    EXPECT_NE(squeezed(got.out).find(squeezed(r.message)), std::string::npos)
        << "want: " << r.message << "\ngot: " << got.out;
    if (r.exit != 0) {
      std::istringstream lines(got.out);
      std::string l, last;
      while (std::getline(lines, l))
        if (!l.empty()) {
          EXPECT_EQ(l.rfind("laptime: ", 0), 0u) << "a line that is not a sentence of laptime's: " << l;
          last = l;
        }
      EXPECT_NE(squeezed(last).find(squeezed(r.message)), std::string::npos) << "the last line: " << last;
    }
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace laptime
