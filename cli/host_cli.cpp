#include "cli/host_cli.h"

#include <CLI/CLI.hpp>

#include "cli/commands.h"

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
    if (!found) return "unknown command '" + args[0] + "': choose one of " + known + ". Run `laptime --help` for usage.";
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
    return msg + " Run `laptime --help` for usage.";
  }
  return "";
}

HostCommand parse_host_command_line(const std::vector<std::string>& args) {
  HostCommand cmd;
  if (!args.empty() && is_gpu_command(args[0])) {
    cmd.kind = HostCommand::Kind::Gpu;
    return cmd;
  }
  CLI::App app{kLaptimeDescription, "laptime"};
  app.require_subcommand(1);
  // The GPU subcommands appear in the help in the order the full parser lists them (bench,
  // forward, analyze, diff, kernels, peak); their options are the module's to parse.
  app.add_subcommand(kGpuCommands[0].name, kGpuCommands[0].description);
  app.add_subcommand(kGpuCommands[1].name, kGpuCommands[1].description);
  CLI::App* analyze = add_analyze_subcommand(app, cmd.analyze);
  CLI::App* diff = add_diff_subcommand(app, cmd.diff);
  add_kernels_subcommand(app, cmd.kernels);
  for (size_t i = 2; i < std::size(kGpuCommands); ++i) app.add_subcommand(kGpuCommands[i].name, kGpuCommands[i].description);

  if (const std::string error = parse_subcommands(app, args, &cmd.help_text); !error.empty())
    throw CommandLineError(error);
  if (!cmd.help_text.empty()) return cmd;
  cmd.kind = analyze->parsed() ? HostCommand::Kind::Analyze
             : diff->parsed()  ? HostCommand::Kind::Diff
                               : HostCommand::Kind::Kernels;
  return cmd;
}

}  // namespace laptime
