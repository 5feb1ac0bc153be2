// Text that leaves laptime: names from a trace are untrusted bytes (a kernel or NVTX name is
// whatever the program passed), and every output format has rules they may break. One
// escaping rule serves all of them, so the text report, the JSON, the Perfetto trace and the
// SVG show a bad name the same way; and one writer that checks every write and the close.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// A word for a POSIX shell, pasted as printed: as it is when it holds only characters no shell
// treats specially (letters, digits, and + - . / : = @ _ , of ASCII); else in single quotes, each '
// written '\''; and where the word holds what single quotes cannot carry through a terminal and a
// paste (a control character, DEL, a C1 control, bytes that are not UTF-8), as one bash/zsh/ksh
// ANSI-C word $'...' with those bytes as \xNN, \ and ' escaped, and ! as \x21 (no history
// expansion). The result is printable UTF-8 without control characters: the terminal shows it as
// it is (escape_name leaves it unchanged), and the shell hands the program the word's bytes. A NUL
// byte cannot be a program's argument: $'\x00' ends the word there, as exec would.
std::string shell_word(std::string_view word);
// The words joined by single spaces, each through shell_word.
std::string shell_words(const std::vector<std::string>& words);

// `cd DIR && ` for a command line run from DIR: through shell_word, and a folder whose name starts
// with '-' written ./-x (cd reads `-` as the previous folder and -x as an option).
std::string shell_cd(const std::string& dir);

// An SQL identifier for SQLite: in double quotes, each " inside doubled, so a table named
// `a"); DROP TABLE b; --` is that one name and nothing else. Every identifier laptime puts into
// SQL text goes through this; values are bound, never written in.
std::string sql_identifier(std::string_view name);

// escape_name, then the XML specials (& < > " ') as entities: text and attribute values of
// an SVG.
std::string xml_escape(std::string_view s);

// escape_name, then HTML's specials (& < > " ') as character references: the text of an HTML
// element or a quoted attribute value, never markup (`<img src=x onerror=...>` reads as those
// characters). Not for inside <script> or <style>, which take no references: see js_string and
// script_json.
std::string html_escape(std::string_view s);

// `s` as a JavaScript string literal in double quotes, for inside an HTML <script> element:
// escape_name first (as every writer), then backslash, both quotes, `<` and `>` (so `</script>`
// and `<!--` cannot end or change the element), `&`, and the line terminators U+2028 and U+2029
// (a raw one ends a line in older JavaScript engines) as backslash escapes (x3C, u2028).
std::string js_string(std::string_view s);

// JSON text (`json_text`, as dump() writes it) made inert inside <script type="application/json">:
// every `<`, `>`, `&`, U+2028 and U+2029 as a JSON escape (backslash u003c, u003e, u0026, u2028, u2029). JSON
// text holds those characters only inside strings, where the escapes mean the same characters,
// so JSON.parse of the result gives the same value as of the input: the page's data is the
// `--json` document, and no name in it can close the element (`</script>`) or open a comment.
std::string script_json(std::string_view json_text);

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
