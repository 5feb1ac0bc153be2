#include "cli/help.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace laptime::cli {
namespace {

constexpr Group kGroups[] = {Group::Input, Group::Selection, Group::Thresholds, Group::Model,
                             Group::Run,   Group::Output,    Group::Job,        Group::NcuCommand};

// Display width of UTF-8 text: its code points (the help holds ± and the like, never wide glyphs).
size_t columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// "-b,--batch" (CLI11's spelling) -> "-b, --batch".
std::string option_names(const CLI::Option* opt) {
  std::string names;
  for (const std::string& s : opt->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const std::string& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names;
}

// What an option's value looks like: {gpt2,resnet50} for a choice, else its type name (FILE, INT, ...).
std::string metavar(const CLI::Option* opt) {
  const std::string full = opt->get_type_name();  // "TEXT:{bf16,fp32}" with a choice's validator
  const size_t brace = full.find('{');
  if (brace != std::string::npos) return full.substr(brace, full.find('}', brace) + 1 - brace);
  return full.substr(0, full.find(':'));
}

std::string option_left(const CLI::Option* opt) {
  if (opt->get_positional()) {
    const bool many = opt->get_expected_max() > 1;
    return opt->get_name() + (many ? "..." : "");
  }
  std::string left = option_names(opt);
  if (opt->get_type_size() != 0) left += " " + metavar(opt);
  return left;
}

std::string option_description(const CLI::Option* opt) {
  std::string d = opt->get_description();
  const std::string shown = opt->get_default_str();
  if (!shown.empty() && d.find("default") == std::string::npos) d += " (default " + shown + ")";
  return d;
}

std::string positional_usage(const CLI::Option* opt) {
  const std::string word = opt->get_name() + (opt->get_expected_max() > 1 ? "..." : "");
  return opt->get_required() ? word : "[" + word + "]";
}

class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(int width) : width_(static_cast<size_t>(width)) {}

  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    return app->get_parent() ? command_help(app) : program_help();
  }

 private:
  // `laptime --help`: the table's commands, the trace ones apart from the GPU ones.
  std::string program_help() const {
    std::ostringstream out;
    out << wrap(kLaptimeDescription, width_, 0, 0) << "\n\n";
    out << "Usage: " << wrap("laptime COMMAND [OPTIONS] [ARGS]...", width_, 7, 7) << "\n";
    size_t name_width = 0;
    for (const CommandInfo& c : kCommands) name_width = std::max(name_width, columns(c.name));
    const size_t column = std::max(2 + name_width + 3, columns("  -V, --version") + 2);
    for (const Side side : {Side::Host, Side::Gpu}) {
      out << "\n"
          << wrap(side == Side::Host ? "Trace commands (every build, no GPU needed):"
                                     : "GPU commands (the CUDA build, on an NVIDIA GPU):",
                  width_, 2, 0)
          << "\n";
      for (const CommandInfo& c : kCommands) {
        if (c.side != side) continue;
        const std::string summary = std::string(c.description).substr(0, std::string(c.description).find('\n'));
        out << entry("  " + std::string(c.name), summary, column);
      }
    }
    out << "\nOptions:\n";
    out << entry("  -h, --help", "print this help and exit", column);
    out << entry("  -V, --version", "print laptime's version and exit", column);
    out << "\n" << wrap("Run `laptime COMMAND --help` for a command's options and examples.", width_, 0, 0) << "\n";
    return out.str();
  }

  // `laptime NAME --help`: what it does, its usage, its options under their headings, examples.
  std::string command_help(const CLI::App* sub) const {
    std::ostringstream out;
    const std::string name = sub->get_name();
    out << wrap(sub->get_description(), width_, 0, 0) << "\n\n";
    const std::vector<const CLI::Option*> positionals =
        sub->get_options([](const CLI::Option* o) { return o->get_positional(); });
    std::string usage = "laptime " + name + " [OPTIONS]";
    for (const CLI::Option* p : positionals) usage += " " + positional_usage(p);
    out << "Usage: " << wrap(usage, width_, 7, 7) << "\n";

    // Every option but --help, by heading; an option under no heading is listed last, under
    // "Options" (tests/test_host_cli.cpp checks that none is).
    std::vector<const CLI::Option*> options = sub->get_options([sub](const CLI::Option* o) {
      return o->nonpositional() && o != sub->get_help_ptr() && o != sub->get_help_all_ptr();
    });
    size_t left_width = 0;
    for (const CLI::Option* o : positionals) left_width = std::max(left_width, columns(option_left(o)));
    for (const CLI::Option* o : options) left_width = std::max(left_width, columns(option_left(o)));
    // The descriptions' column: past the longest name, but never more than a third of the line
    // (a longer name puts its description on the next line).
    const size_t column = std::min(2 + left_width + 2, std::max<size_t>(width_ / 3, 16));
    if (!positionals.empty()) {
      out << "\nArguments:\n";
      for (const CLI::Option* p : positionals) out << entry("  " + option_left(p), p->get_description(), column);
    }
    std::vector<std::string> titles;
    for (Group g : kGroups) titles.push_back(group_title(g));
    for (const CLI::Option* o : options)
      if (std::find(titles.begin(), titles.end(), o->get_group()) == titles.end()) titles.push_back(o->get_group());
    for (const std::string& title : titles) {
      std::string block;
      for (const CLI::Option* o : options)
        if (o->get_group() == title) block += entry("  " + option_left(o), option_description(o), column);
      if (!block.empty()) out << "\n" << title << ":\n" << block;
    }
    // A command's closing paragraph (CLI::App::footer): what it does beyond its options, said once.
    if (!sub->get_footer().empty()) out << "\n" << wrap(sub->get_footer(), width_, 0, 0) << "\n";
    const CommandInfo* info = find_command(name);
    if (info && *info->examples) {
      out << "\nExamples:\n";
      std::istringstream lines(info->examples);
      for (std::string line; std::getline(lines, line);) out << "  " << line << "\n";
    }
    return out.str();
  }

  // One entry: `left`, then its description from `column` on, wrapped; on the next line when
  // `left` reaches the column.
  std::string entry(const std::string& left, const std::string& description, size_t column) const {
    std::string out = left;
    size_t used = columns(left);
    if (description.empty()) return out + "\n";
    if (used + 2 > column) {
      out += "\n";
      used = 0;
    }
    out += std::string(column - used, ' ');
    return out + wrap(description, width_, column, column) + "\n";
  }

  size_t width_;
};

}  // namespace

const char* group_title(Group g) {
  switch (g) {
    case Group::Input:
      return "Input";
    case Group::Selection:
      return "Selection";
    case Group::Thresholds:
      return "Thresholds";
    case Group::Model:
      return "Model";
    case Group::Run:
      return "Run";
    case Group::Output:
      return "Output";
    case Group::Job:
      return "Job view (several reports)";
    case Group::NcuCommand:
      return "The ncu command (--command)";
  }
  return "Options";
}

void heading(CLI::App* sub, Group g) { sub->option_defaults()->group(group_title(g)); }

void use_laptime_help(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>(help_width())); }

int help_width() {
  int width = 0;
  if (const char* env = std::getenv("COLUMNS"); env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v < 100000) width = static_cast<int>(v);
  }
  struct winsize ws {};
  if (width == 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    width = ws.ws_col;
  if (width == 0) width = 80;
  return std::clamp(width, 40, 120);
}

std::string wrap(const std::string& text, size_t width, size_t indent, size_t first_used) {
  std::string out;
  size_t used = first_used;
  bool line_empty = true;
  const std::string pad(indent, ' ');
  std::istringstream paragraphs(text);
  bool first_paragraph = true;
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    if (!first_paragraph) {
      out += "\n" + pad;
      used = indent;
      line_empty = true;
    }
    first_paragraph = false;
    std::istringstream words(paragraph);
    for (std::string word; words >> word;) {
      const size_t w = columns(word);
      if (!line_empty && used + 1 + w > width) {
        out += "\n" + pad;
        used = indent;
        line_empty = true;
      }
      if (!line_empty) {
        out += ' ';
        ++used;
      }
      out += word;
      used += w;
      line_empty = false;
    }
  }
  return out;
}

std::string usage_hint(const std::string& command) {
  return find_command(command) ? " Run `laptime " + command + " --help` for usage."
                               : std::string(" Run `laptime --help` for usage.");
}

}  // namespace laptime::cli
