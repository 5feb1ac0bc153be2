// The beginning and the end every trace command (analyze, diff, kernels, scrub) shares, so they
// cannot drift apart: before any input is read, every output is checked against every
// input and the JSON's temporary made (core/output_file.h); at the end, the JSON written
// (strings escaped, every write checked, renamed into place), one "wrote WHAT: PATH" line per
// file written, and standard output flushed and checked (a full disk or a closed pipe is a
// failure too). Every OutputError becomes the command's one sentence (a TraceError).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/output_file.h"

namespace laptime::cli {

// Checks `outputs` (the JSON first, "-" allowed for it) against `inputs`, and opens the JSON's
// temporary into `json` when one was asked for (outputs.front().path not empty).
void open_outputs(std::optional<OutputFile>& json, const std::vector<OutputSpec>& outputs,
                  const std::vector<std::string>& inputs);

// The JSON report's bytes: every string escaped (trace/model/text.h's escape_json_strings: a path
// that is not UTF-8 would make dump() throw), indented by 2, a newline at the end. What `--json`
// writes and `--html` embeds (trace/write/html_page.h): one document made once, so the page shows
// the numbers of the JSON and no others.
std::string json_document(nlohmann::json j);
// Writes `document` into `out` (when there is one) as it is, and commits it: json_document's, or
// JSON written as text (trace/ncu/ncu_layers.h's DeferredKernelLists, which writes a million
// kernels' rows without holding them as a tree).
void write_document(std::optional<OutputFile>& out, const std::string& document);
// Writes json_document(j) into `out` (when there is one) and commits it.
void write_json(std::optional<OutputFile>& out, nlohmann::json j);

// Renames a file written into `out`'s temporary (scrub's copy) into place.
void commit(std::optional<OutputFile>& out);

struct Written {
  const char* what;         // "JSON report", "SVG timeline", ...
  const std::string& path;  // "" (not asked for) and "-" (standard output) print nothing
};

// The command's last lines on standard output.
class Ending {
 public:
  // One "wrote WHAT: PATH" line per file, a blank line before the first of the command; called
  // once a file is in place, so a later failure still leaves the line of what was written.
  void wrote(std::initializer_list<Written> written);
  // Standard output flushed and checked: throws TraceError when the report did not get out.
  void finish() const;

 private:
  bool any_ = false;
};

}  // namespace laptime::cli
