#include "cli/host_cli.h"

#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/help.h"

namespace laptime {

std::string parse_subcommands(CLI::App& app, const std::vector<std::string>& args, std::string* help) {
  // CLI11 would only say "a subcommand is required" for a misspelt one: name it instead.
  if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      found |= sub->get_name() == args[0];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) return "unknown command '" + args[0] + "': choose one of " + known + "." + cli::usage_hint("");
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    *help = app.help();
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->parsed()) *help = sub->help();
    return "";
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (!msg.empty() && msg.back() != '.') msg += '.';
    return msg + cli::usage_hint(args.empty() ? "" : args[0]);
  }
  return "";
}

namespace {

// The executable's parser for each Host row of the table (cli/commands.h).
CLI::App* add_host_subcommand(CLI::App& app, const CommandInfo& c, HostCommand& cmd, HostCommand::Kind* kind) {
  const std::string name = c.name;
  if (name == "analyze") {
    *kind = HostCommand::Kind::Analyze;
    return add_analyze_subcommand(app, cmd.analyze);
  }
  if (name == "diff") {
    *kind = HostCommand::Kind::Diff;
    return add_diff_subcommand(app, cmd.diff);
  }
  if (name == "kernels") {
    *kind = HostCommand::Kind::Kernels;
    return add_kernels_subcommand(app, cmd.kernels);
  }
  if (name == "scrub") {
    *kind = HostCommand::Kind::Scrub;
    return add_scrub_subcommand(app, cmd.scrub);
  }
  throw std::logic_error("cli/commands.h lists a host subcommand the executable has no parser for: " + name);
}

}  // namespace

HostCommand parse_host_command_line(const std::vector<std::string>& args) {
  HostCommand cmd;
  if (args.size() == 1 && (args[0] == "--version" || args[0] == "-V")) {
    cmd.help_text = std::string("laptime ") + LAPTIME_VERSION + "\n";
    return cmd;
  }
  if (!args.empty() && is_gpu_command(args[0])) {
    cmd.kind = HostCommand::Kind::Gpu;
    return cmd;
  }
  CLI::App app{kLaptimeDescription, "laptime"};
  cli::use_laptime_help(app);
  app.require_subcommand(1);
  // Every row of the table, in its order; the GPU subcommands by name only (their options are
  // the module's to parse).
  std::vector<std::pair<CLI::App*, HostCommand::Kind>> host;
  for (const CommandInfo& c : kCommands) {
    if (c.side == Side::Gpu) {
      app.add_subcommand(c.name, c.description);
      continue;
    }
    HostCommand::Kind kind{};
    CLI::App* sub = add_host_subcommand(app, c, cmd, &kind);
    host.emplace_back(sub, kind);
  }

  // kernels: what follows -- is the program to profile with `--command --from TRACE -- PROGRAM
  // ARGS`, else report names (which CLI11 hands to no subcommand's positional after --).
  std::vector<std::string> words = args, after_dashes;
  const bool kernels = !args.empty() && args[0] == "kernels";
  if (kernels) {
    const auto dashes = std::find(args.begin(), args.end(), "--");
    if (dashes != args.end()) {
      after_dashes.assign(dashes + 1, args.end());
      words.assign(args.begin(), dashes);
    }
  }
  if (const std::string error = parse_subcommands(app, words, &cmd.help_text); !error.empty())
    throw CommandLineError(error);
  if (kernels && !after_dashes.empty()) {
    const bool from = !cmd.kernels.from.empty();
    std::vector<std::string>& to = from ? cmd.kernels.program : cmd.kernels.reports;
    to.insert(to.end(), after_dashes.begin(), after_dashes.end());
    if (!from && to.size() > 2)
      throw CommandLineError("laptime kernels reads one report, or two to compare, not " + std::to_string(to.size()) +
                             "." + cli::usage_hint("kernels"));
  }
  if (!cmd.help_text.empty()) return cmd;
  for (const auto& [sub, kind] : host)
    if (sub->parsed()) cmd.kind = kind;
  return cmd;
}

}  // namespace laptime
