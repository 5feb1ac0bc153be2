// Lists of commands in the docs cannot fall behind cli/commands.h's table. Two forms:
//   - a marked list: `<!-- commands: host -->` (or gpu, or all) before or inside the text that
//     names that side's commands; the text from the marker to the end of its line, or, when the
//     marker ends its line, the paragraph after it, must name each such command as `name`;
//   - the help excerpt: a ```text block right after `<!-- laptime --help -->` must be what
//     `laptime --help` prints at 80 columns, to the byte.
// Every Markdown file of the repository is read, but the run records (results/, docs/history/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "tests/support/run_binary.h"
#include "tests/support/trace_testing.h"

namespace laptime {
namespace {

namespace fs = std::filesystem;
using testing_support::run_shell;
using trace::testing_support::source_dir;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> markdown_files() {
  std::vector<fs::path> out;
  const fs::path root = source_dir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = fs::relative(it->path(), root).string();
    if (it->is_directory() &&
        (rel == "results" || rel == "docs/history" || rel.rfind("build", 0) == 0 || rel[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".md") out.push_back(it->path());
  }
  return out;
}

struct Marked {
  std::string file, side, text;
  size_t line = 0;
};

// Every `<!-- commands: SIDE -->` of `text` and the text it governs.
std::vector<Marked> marked_lists(const std::string& file, const std::string& text) {
  static const std::string kOpen = "<!-- commands: ";
  std::vector<Marked> out;
  for (size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, at + 1)) {
    Marked m;
    m.file = file;
    m.line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    const size_t close = text.find(" -->", at);
    m.side = text.substr(at + kOpen.size(), close - at - kOpen.size());
    size_t from = close + 4, to = text.find('\n', from);
    if (text.find_first_not_of(' ', from) == to) {  // the marker ends its line: the paragraph after it
      from = to + 1;
      to = text.find("\n\n", from);
    }
    m.text = text.substr(from, to == std::string::npos ? std::string::npos : to - from);
    out.push_back(m);
  }
  return out;
}

// Whether `text` holds `word` as a word of its own (`diff` in "a `diff`", not in "diffs").
bool names(const std::string& text, const std::string& word) {
  const auto part_of_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !part_of_word(text[at - 1])) && (end == text.size() || !part_of_word(text[end]))) return true;
  }
  return false;
}

// The commands of the table that `m` should name and does not.
std::vector<std::string> missing_commands(const Marked& m) {
  std::vector<std::string> missing;
  for (const CommandInfo& c : kCommands) {
    const bool wanted = m.side == "all" || (m.side == "host") == (c.side == Side::Host);
    if (wanted && !names(m.text, c.name)) missing.push_back(c.name);
  }
  return missing;
}

TEST(CommandsLists, EveryMarkedListNamesEveryCommandOfItsSide) {
  size_t lists = 0;
  for (const fs::path& f : markdown_files()) {
    const std::string rel = fs::relative(f, source_dir()).string();
    for (const Marked& m : marked_lists(rel, read_text(f))) {
      ++lists;
      EXPECT_TRUE(m.side == "host" || m.side == "gpu" || m.side == "all") << m.file << ":" << m.line;
      EXPECT_THAT(missing_commands(m), ::testing::IsEmpty()) << m.file << ":" << m.line << ": " << m.text;
    }
  }
  EXPECT_GE(lists, 3u);  // README's and docs/ERRORS.md's, at least: the markers themselves must not vanish
}

// The rule on text made here: a list that drops any one command of its side is caught, and the
// marker governs the rest of its line, or the paragraph after it.
TEST(CommandsLists, AListMissingACommandIsCaught) {
  std::string host, gpu;
  for (const CommandInfo& c : kCommands) (c.side == Side::Host ? host : gpu) += std::string("`") + c.name + "`, ";
  const std::string text = "a <!-- commands: host --> " + host + "\n\n<!-- commands: gpu -->\n" + gpu + "\nmore\n\nend";
  const std::vector<Marked> m = marked_lists("t.md", text);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].text, " " + host);
  EXPECT_EQ(m[1].text, gpu + "\nmore");
  for (const Marked& full : m) EXPECT_THAT(missing_commands(full), ::testing::IsEmpty());
  for (const CommandInfo& c : kCommands) {
    Marked cut = m[c.side == Side::Host ? 0 : 1];
    const std::string word = std::string("`") + c.name + "`";
    cut.text.erase(cut.text.find(word), word.size());
    EXPECT_EQ(missing_commands(cut), std::vector<std::string>{c.name});
  }
}

TEST(CommandsLists, TheReadmesHelpExcerptIsTheHelp) {
  const std::string readme = read_text(source_dir() + "/README.md");
  const std::string marker = "<!-- laptime --help -->\n```text\n";
  const size_t at = readme.find(marker);
  ASSERT_NE(at, std::string::npos) << "README.md has no help excerpt";
  const size_t from = at + marker.size(), to = readme.find("```\n", from);
  const auto r = run_shell("env -u COLUMNS " + std::string(LAPTIME_BINARY) + " --help");
  EXPECT_EQ(readme.substr(from, to - from), r.out)
      << "README.md's help excerpt differs from `laptime --help`: paste the command's output there";
}

}  // namespace
}  // namespace laptime
