// Text that leaves laptime: names from a trace are untrusted bytes (a kernel or NVTX name is
// whatever the program passed), and every output format has rules they may break. One
// escaping rule serves all of them, so the text report, the JSON, the Perfetto trace and the
// SVG show a bad name the same way; and one writer that checks every write and the close.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "trace/model/error.h"

namespace laptime::trace {

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` with every byte that is not part of well-formed UTF-8, every C0 control character,
// DEL, and the noncharacters U+FFFE/U+FFFF written as the four characters \xNN (uppercase
// hex), one escape per byte. Valid text without control characters comes back unchanged, so
// the result is valid UTF-8 that any terminal, JSON parser or XML parser accepts.
std::string escape_name(std::string_view s);

// True when escape_name(s) would change s.
bool needs_escape(std::string_view s);

namespace detail {
// A name as a message quotes it: at most 200 bytes, cut at a character boundary, then "... (N
// characters)", so a sentence about a hostile trace stays a sentence.
std::string clip(const std::string& name);
}  // namespace detail

// A sentence for a terminal, as `laptime: SENTENCE` prints every failure: through escape_name (a
// newline or an ESC inside a file name can neither split the line, so that a second one seems to
// begin "laptime:", nor reach the terminal raw), and every run of more than 200 bytes without a
// space cut as names are cut ("... (N characters)"), so a 100,000-character value is not
// echoed whole. Idempotent: a sentence already printable comes back unchanged.
std::string one_line(std::string_view sentence);

// escape_name, then the XML specials (& < > " ') as entities: text and attribute values of
// an SVG.
std::string xml_escape(std::string_view s);

// At most `max_bytes` bytes of `s`, cut at a character boundary (a label shortened to fit
// never ends in half a character).
std::string utf8_prefix(const std::string& s, size_t max_bytes);

// Every string (values and object keys) of `j` through escape_name, before it is dumped:
// nlohmann::json throws on invalid UTF-8, which would leave a half-written file.
void escape_json_strings(nlohmann::json& j);

// Writes `content` to `path` through core/output_file.h's OutputFile (a temporary renamed when
// complete, every write and the close checked; never onto a device, FIFO or folder); throws
// TraceError naming `what` ("the JSON report") and the path, with the reason.
void write_output(const std::string& path, const std::string& what, const std::string& content);

}  // namespace laptime::trace
