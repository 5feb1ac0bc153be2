#include "cli/ending.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "trace/model/error.h"
#include "trace/model/text.h"

namespace laptime::cli {

void open_outputs(std::optional<OutputFile>& json, const std::vector<OutputSpec>& outputs,
                  const std::vector<std::string>& inputs) {
  try {
    check_outputs(outputs, inputs);
    if (!outputs.empty() && !outputs.front().path.empty()) json.emplace(outputs.front(), inputs);
  } catch (const OutputError& e) {
    throw trace::TraceError(e.what());
  }
}

std::string json_document(nlohmann::json j) {
  trace::escape_json_strings(j);
  return j.dump(2) + "\n";
}

void write_document(std::optional<OutputFile>& out, const std::string& document) {
  if (!out) return;
  try {
    out->write(document);
    out->commit();
  } catch (const OutputError& e) {
    throw trace::TraceError(e.what());
  }
}

void write_json(std::optional<OutputFile>& out, nlohmann::json j) {
  if (out) write_document(out, json_document(std::move(j)));
}

void commit(std::optional<OutputFile>& out) {
  if (!out) return;
  try {
    out->commit();
  } catch (const OutputError& e) {
    throw trace::TraceError(e.what());
  }
}

void Ending::wrote(std::initializer_list<Written> written) {
  for (const Written& w : written) {
    if (w.path.empty() || w.path == "-") continue;
    std::printf("%swrote %s: %s\n", any_ ? "" : "\n", w.what, trace::escape_name(w.path).c_str());
    any_ = true;
  }
}

void Ending::finish() const {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw trace::TraceError(std::string("cannot write the report to standard output: ") + std::strerror(errno) + ".");
}

}  // namespace laptime::cli
