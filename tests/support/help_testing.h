// What every command's --help must hold, whichever half prints it (test_host_cli for the trace
// commands, test_cli for the GPU ones): the usage line names the program and the command, no line
// passes the width (an example, a command line to copy, may), every option sits under one of
// cli/help.h's headings, and the Examples block holds the table's examples. Also a shell-word
// splitter, so the tests can parse each example as the shell would hand it over.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/help.h"

namespace laptime::testing_support {

inline size_t display_columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `line` split as a POSIX shell splits words: blanks separate, '...' and "..." quote (no
// expansion: the examples hold none).
inline std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      const size_t end = line.find(c, i + 1);
      word += line.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// The examples of `command` that run laptime, as argument vectors without the program name.
inline std::vector<std::vector<std::string>> laptime_examples(const CommandInfo& command) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : lines_of(command.examples)) {
    std::vector<std::string> words = shell_words(line);
    if (words.empty() || words[0] != "laptime") continue;
    words.erase(words.begin());
    out.push_back(words);
  }
  return out;
}

// `help` is what `laptime NAME --help` printed at `width` columns.
inline void expect_command_help(const CommandInfo& command, const std::string& help, size_t width) {
  SCOPED_TRACE(std::string("laptime ") + command.name + " --help");
  const std::vector<std::string> lines = lines_of(help);
  ASSERT_FALSE(lines.empty());
  const std::string usage = std::string("Usage: laptime ") + command.name + " [OPTIONS]";
  bool has_usage = false, in_examples = false;
  std::vector<std::string> examples;
  for (const std::string& line : lines) {
    has_usage |= line.rfind(usage, 0) == 0;
    if (line == "Examples:") {
      in_examples = true;
      continue;
    }
    if (in_examples) {
      examples.push_back(line.substr(2));
      continue;  // a command line to copy is not wrapped
    }
    EXPECT_LE(display_columns(line), width) << line;
    // Every option under a heading of cli/help.h: CLI11's catch-all is never printed.
    EXPECT_NE(line, "Options:");
    EXPECT_NE(line, "Positionals:");
  }
  EXPECT_TRUE(has_usage) << help;
  EXPECT_EQ(examples, lines_of(command.examples));
  EXPECT_FALSE(examples.empty());
  // The command's description is the first paragraph.
  const std::string first_words = std::string(command.description).substr(0, 20);
  EXPECT_EQ(help.rfind(first_words, 0), 0u) << help;
}

}  // namespace laptime::testing_support
