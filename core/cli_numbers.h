// Command-line values checked the same way in every subcommand (bench, forward, analyze):
// numbers within stated bounds, switches that take no value or a clear one, input files that
// are regular files. Every refusal is one sentence naming the flag and what was typed:
//   "--batch must be a positive integer, got 'abc'."
//   "--iters must be at most 1000000, got '5000000'."
//   "--gap-us must be a positive number, got 'nan'."
// The add_* helpers register a CLI11 option whose callback parses the text itself (CLI11's
// own checks answer a typo with "Value 0 not in range 0.000000 to 1.797693e+308"); a refusal
// is a CLI::ValidationError, so callers report it like any other usage error.
//
// Host-only, in laptime_host with core/output_file (trace/ uses it for `analyze`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace laptime::cli {

// text as an integer in [min, max]; throws CLI::ValidationError otherwise.
int64_t parse_integer(const std::string& flag, const std::string& text, int64_t min, int64_t max);
// text as a finite number in (0, max]; throws CLI::ValidationError otherwise ("nan", "inf",
// "5us" and "" included).
double parse_positive_real(const std::string& flag, const std::string& text, double max);
// text as a finite number in [0, max]; throws CLI::ValidationError otherwise.
double parse_non_negative_real(const std::string& flag, const std::string& text, double max);
// "1", "true", "yes", "on" -> true; "0", "false", "no", "off" -> false (any case); else throws.
bool parse_switch(const std::string& flag, const std::string& text);

// Options that parse with the functions above. `names` as CLI11 takes them ("--batch,-b").
CLI::Option* add_integer(CLI::App* app, const std::string& names, int* target, int64_t min, int64_t max,
                         const std::string& help);
CLI::Option* add_integer(CLI::App* app, const std::string& names, uint64_t* target, int64_t min, int64_t max,
                         const std::string& help);
// Unset (std::nullopt) unless the flag is given.
CLI::Option* add_integer(CLI::App* app, const std::string& names, std::optional<int>* target, int64_t min, int64_t max,
                         const std::string& help);
CLI::Option* add_integer(CLI::App* app, const std::string& names, std::optional<uint32_t>* target, int64_t min,
                         int64_t max, const std::string& help);
CLI::Option* add_positive_real(CLI::App* app, const std::string& names, double* target, double max,
                               const std::string& help);
CLI::Option* add_non_negative_real(CLI::App* app, const std::string& names, double* target, double max,
                                   const std::string& help);
// Unset (std::nullopt) unless the flag is given.
CLI::Option* add_non_negative_real(CLI::App* app, const std::string& names, std::optional<double>* target, double max,
                                   const std::string& help);
// A flag: `--graph` alone is true; `--graph=1|0|true|false|yes|no|on|off` says it explicitly.
CLI::Option* add_switch(CLI::App* app, const std::string& names, bool* target, const std::string& help);

// A file the command reads: it must exist and be a regular file (a FIFO would block the
// open forever, a device or a folder is no file of ours; core/input_file.h). Throws
// CLI::ValidationError:
//   "--tokens: /tmp/fifo is a FIFO (named pipe), not a regular file."
//   "--layers: the file name is empty; give a file."
void check_input_file(const std::string& flag, const std::string& path);
// An option whose value is such an input file.
CLI::Option* add_input_file(CLI::App* app, const std::string& names, std::string* target, const std::string& help);
// An input file that the command checks itself when it runs (core/input_file.h's check_input,
// with the command's own words and before any long work): only the empty name is refused here.
//   "--layers: the file name is empty; give a file."
CLI::Option* add_input_path(CLI::App* app, const std::string& names, std::string* target, const std::string& help);
// An option naming a file the command writes (core/output_file.h checks it when the command
// runs). Only the empty name is refused here, because an empty path means "not asked for"
// further on: `--json ''` would otherwise write nothing and succeed.
//   "--json: the file name is empty; give a file name (or - for standard output)."
CLI::Option* add_output_file(CLI::App* app, const std::string& names, std::string* target, const std::string& help,
                             bool stdout_ok = false);

// The first long name in CLI11 names ("--batch,-b" -> "--batch"; "file" -> "file").
std::string flag_name(const std::string& names);

}  // namespace laptime::cli
