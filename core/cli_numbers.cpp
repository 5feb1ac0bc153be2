#include "core/cli_numbers.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <CLI/CLI.hpp>

#include "core/input_file.h"

namespace laptime::cli {
namespace {

// What the user typed, quoted and cut short: a message stays one readable line.
std::string typed(const std::string& text) {
  constexpr size_t kMax = 40;
  std::string shown = text.size() > kMax ? text.substr(0, kMax) + "..." : text;
  for (char& c : shown)
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  return "'" + shown + "'";
}

std::string integer_kind(int64_t min, int64_t max) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

[[noreturn]] void refuse(const std::string& sentence) { throw CLI::ValidationError(sentence); }

}  // namespace

std::string flag_name(const std::string& names) {
  std::string first;
  size_t begin = 0;
  while (begin <= names.size()) {
    const size_t end = std::min(names.find(',', begin), names.size());
    const std::string name = names.substr(begin, end - begin);
    if (name.rfind("--", 0) == 0) return name;
    if (first.empty()) first = name;
    begin = end + 1;
  }
  return first;
}

int64_t parse_integer(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    refuse(flag + " must be " + integer_kind(min, max) + ", got " + typed(text) + ".");
  if (ec == std::errc::result_out_of_range) {
    if (text[0] == '-') refuse(flag + " must be " + integer_kind(min, max) + ", got " + typed(text) + ".");
    refuse(flag + " must be at most " + std::to_string(max) + ", got " + typed(text) + ".");
  }
  if (value < min) refuse(flag + " must be " + integer_kind(min, max) + ", got " + typed(text) + ".");
  if (value > max) refuse(flag + " must be at most " + std::to_string(max) + ", got " + typed(text) + ".");
  return value;
}

namespace {
// A finite number in [0, max] (zero_ok) or (0, max]; "nan", "inf", "5us", " 5" and "" refused.
double parse_real(const std::string& flag, const std::string& text, double max, bool zero_ok) {
  char* end = nullptr;
  const double value =
      text.empty() || std::isspace(static_cast<unsigned char>(text[0])) ? NAN : std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0 || (value == 0 && !zero_ok))
    refuse(flag + " must be a " + (zero_ok ? "non-negative" : "positive") + " number, got " + typed(text) + ".");
  if (value > max) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", max);
    refuse(flag + " must be at most " + bound + ", got " + typed(text) + ".");
  }
  return value == 0 ? 0.0 : value;  // "-0" is 0
}
}  // namespace

double parse_positive_real(const std::string& flag, const std::string& text, double max) {
  return parse_real(flag, text, max, false);
}

double parse_non_negative_real(const std::string& flag, const std::string& text, double max) {
  return parse_real(flag, text, max, true);
}

bool parse_switch(const std::string& flag, const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  refuse(flag + (flag.empty() ? "" : " ") + "takes no value, or one of 1/0, true/false, yes/no, on/off; got " +
         typed(text) + ".");
}

namespace {
template <class T>
CLI::Option* add_integer_impl(CLI::App* app, const std::string& names, T* target, int64_t min, int64_t max,
                              const std::string& help) {
  const std::string flag = flag_name(names);
  return app
      ->add_option_function<std::string>(
          names, [=](const std::string& text) { *target = static_cast<T>(parse_integer(flag, text, min, max)); }, help)
      ->type_name("INT");
}
}  // namespace

CLI::Option* add_integer(CLI::App* app, const std::string& names, int* target, int64_t min, int64_t max,
                         const std::string& help) {
  return add_integer_impl(app, names, target, min, max, help)->default_str(std::to_string(*target));
}

CLI::Option* add_integer(CLI::App* app, const std::string& names, std::optional<int>* target, int64_t min, int64_t max,
                         const std::string& help) {
  return add_integer_impl(app, names, target, min, max, help);
}

CLI::Option* add_integer(CLI::App* app, const std::string& names, std::optional<uint32_t>* target, int64_t min,
                         int64_t max, const std::string& help) {
  return add_integer_impl(app, names, target, min, max, help);
}

CLI::Option* add_integer(CLI::App* app, const std::string& names, uint64_t* target, int64_t min, int64_t max,
                         const std::string& help) {
  return add_integer_impl(app, names, target, min, max, help)->default_str(std::to_string(*target));
}

namespace {
// T is double (the default shown in --help) or std::optional<double> (unset unless given).
template <class T>
CLI::Option* add_real_impl(CLI::App* app, const std::string& names, T* target, double max, bool zero_ok,
                           const std::string& help) {
  const std::string flag = flag_name(names);
  CLI::Option* opt =
      app->add_option_function<std::string>(
             names, [=](const std::string& text) { *target = parse_real(flag, text, max, zero_ok); }, help)
          ->type_name("NUMBER");
  if constexpr (std::is_same_v<T, double>) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", *target);
    opt->default_str(shown);
  }
  return opt;
}
}  // namespace

CLI::Option* add_positive_real(CLI::App* app, const std::string& names, double* target, double max,
                               const std::string& help) {
  return add_real_impl(app, names, target, max, false, help);
}

CLI::Option* add_non_negative_real(CLI::App* app, const std::string& names, double* target, double max,
                                   const std::string& help) {
  return add_real_impl(app, names, target, max, true, help);
}

CLI::Option* add_non_negative_real(CLI::App* app, const std::string& names, std::optional<double>* target, double max,
                                   const std::string& help) {
  return add_real_impl(app, names, target, max, true, help);
}

CLI::Option* add_switch(CLI::App* app, const std::string& names, bool* target, const std::string& help) {
  // CLI11 hands a bool flag "true" when it stands alone and the text after '=' otherwise;
  // anything but a clear yes or no is refused here, before CLI11 tries to convert it.
  const CLI::Validator clear_value(
      [](std::string& text) -> std::string {
        try {
          parse_switch("", text);
          return "";
        } catch (const CLI::ValidationError&) {
          return "takes no value, or one of 1/0, true/false, yes/no, on/off; got " + typed(text) + ".";
        }
      },
      "");
  return app->add_flag(names, *target, help)->check(clear_value);
}

void check_input_file(const std::string& flag, const std::string& path) {
  if (path.empty()) refuse(flag + ": the file name is empty; give a file.");
  const std::string problem = input_problem(path);
  if (problem.empty()) return;
  if (problem.rfind("is ", 0) == 0) refuse(flag + ": " + path + " " + problem + ".");
  refuse(flag + ": cannot read " + path + ": " + problem.substr(problem.find(": ") + 2) + ".");
}

CLI::Option* add_input_file(CLI::App* app, const std::string& names, std::string* target, const std::string& help) {
  const std::string flag = flag_name(names);
  return app
      ->add_option_function<std::string>(
          names,
          [=](const std::string& path) {
            check_input_file(flag, path);
            *target = path;
          },
          help)
      ->type_name("FILE");
}

}  // namespace laptime::cli

namespace laptime::cli {

CLI::Option* add_input_path(CLI::App* app, const std::string& names, std::string* target, const std::string& help) {
  const std::string flag = flag_name(names);
  return app
      ->add_option_function<std::string>(
          names,
          [=](const std::string& path) {
            if (path.empty()) refuse(flag + ": the file name is empty; give a file.");
            *target = path;
          },
          help)
      ->type_name("FILE");
}

CLI::Option* add_output_file(CLI::App* app, const std::string& names, std::string* target, const std::string& help,
                             bool stdout_ok) {
  const std::string flag = flag_name(names);
  return app
      ->add_option_function<std::string>(
          names,
          [=](const std::string& path) {
            if (path.empty())
              refuse(flag + ": the file name is empty; give a file name" +
                     (stdout_ok ? " (or - for standard output)." : "."));
            *target = path;
          },
          help)
      ->type_name("FILE");
}

}  // namespace laptime::cli
