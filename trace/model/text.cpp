#include "trace/model/text.h"

#include "core/output_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "trace/model/error.h"

namespace laptime::trace {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode's table 3-7), or 0 when the
// bytes there are not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const size_t left = s.size() - i;
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < left && b(k) >= lo && b(k) <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

bool control(unsigned char c) { return c < 0x20 || c == 0x7F; }

// U+FFFE and U+FFFF (EF BF BE, EF BF BF): valid UTF-8, but not characters XML allows.
bool nonchar(std::string_view s, size_t i, size_t n) {
  return n == 3 && static_cast<unsigned char>(s[i]) == 0xEF && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
         static_cast<unsigned char>(s[i + 2]) >= 0xBE;
}

void append_hex(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789ABCDEF";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool needs_escape(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0 || (n == 1 && control(static_cast<unsigned char>(s[i]))) || nonchar(s, i, n)) return true;
    i += n;
  }
  return false;
}

std::string escape_name(std::string_view s) {
  if (!needs_escape(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0 || (n == 1 && control(static_cast<unsigned char>(s[i])))) {
      append_hex(out, static_cast<unsigned char>(s[i]));  // one byte at a time: resynchronize on the next
      ++i;
    } else if (nonchar(s, i, n)) {
      for (size_t k = 0; k < n; ++k) append_hex(out, static_cast<unsigned char>(s[i + k]));
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string detail::clip(const std::string& name) {
  constexpr size_t kMax = 200;
  if (name.size() <= kMax) return name;
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return name.substr(0, cut) + "... (" + std::to_string(name.size()) + " characters)";
}

std::string one_line(std::string_view sentence) {
  const std::string escaped = escape_name(sentence);
  std::string out;
  out.reserve(std::min(escaped.size(), size_t{4096}));
  for (size_t i = 0; i < escaped.size();) {
    size_t end = escaped.find(' ', i);
    if (end == std::string::npos) end = escaped.size();
    out += detail::clip(escaped.substr(i, end - i));  // every run of more than 200 bytes cut as a name is
    if (end < escaped.size()) out += ' ';
    i = end + 1;
  }
  return out;
}

namespace {

// Characters no shell treats specially: such a word needs no quotes.
bool plain_shell_char(unsigned char c) { return c < 0x80 && (std::isalnum(c) || std::strchr("+-./:=@_,", c)); }

// U+0080..U+009F (C2 80..C2 9F): valid UTF-8, but C1 controls a terminal may act on.
bool c1_control(std::string_view s, size_t i, size_t n) {
  return n == 2 && static_cast<unsigned char>(s[i]) == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
}

// Bytes at s[i] (n of them, 0: not UTF-8) that a printed line may not carry as they are: what
// escape_name escapes, and the C1 controls.
bool unprintable(std::string_view s, size_t i, size_t n) {
  return n == 0 || (n == 1 && control(static_cast<unsigned char>(s[i]))) || nonchar(s, i, n) || c1_control(s, i, n);
}

}  // namespace

std::string shell_word(std::string_view word) {
  bool plain = !word.empty(), single = true;
  for (size_t i = 0; i < word.size();) {
    const size_t n = utf8_sequence(word, i);
    plain = plain && n == 1 && plain_shell_char(static_cast<unsigned char>(word[i]));
    single = single && !unprintable(word, i, n);
    i += n == 0 ? 1 : n;
  }
  if (plain) return std::string(word);
  std::string out;
  if (single) {
    out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  out = "$'";
  for (size_t i = 0; i < word.size();) {
    const size_t n = utf8_sequence(word, i), bytes = n == 0 ? 1 : n;
    const unsigned char c = static_cast<unsigned char>(word[i]);
    if (unprintable(word, i, n) || c == '!') {
      for (size_t k = 0; k < bytes; ++k) append_hex(out, static_cast<unsigned char>(word[i + k]));
    } else {
      if (c == '\'' || c == '\\') out += '\\';
      out.append(word.substr(i, n));
    }
    i += bytes;
  }
  return out + "'";
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
  return out;
}

std::string shell_cd(const std::string& dir) {
  return "cd " + shell_word(!dir.empty() && dir.front() == '-' ? "./" + dir : dir) + " && ";
}

std::string sql_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

// escape_name, then & < > " as entities and ' as `apos`: XML's and HTML's rules differ only there.
std::string with_entities(std::string_view s, const char* apos) {
  const std::string clean = escape_name(s);
  std::string out;
  out.reserve(clean.size() + 16);
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += apos;
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view s) { return with_entities(s, "&apos;"); }

// &apos; is XML's; HTML 4 lacks it, so a page uses the numeric reference.
std::string html_escape(std::string_view s) { return with_entities(s, "&#39;"); }

namespace {

// U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR (E2 80 A8, E2 80 A9) at s[i].
bool line_terminator(std::string_view s, size_t i) {
  return i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
         (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9);
}

}  // namespace

std::string js_string(std::string_view s) {
  const std::string clean = escape_name(s);  // no control character or invalid byte is left
  std::string out = "\"";
  out.reserve(clean.size() + 16);
  for (size_t i = 0; i < clean.size(); ++i) {
    const char c = clean[i];
    if (line_terminator(clean, i)) {
      out += static_cast<unsigned char>(clean[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c == '\\' || c == '"' || c == '\'') {
      out += '\\';
      out += c;
    } else if (c == '<' || c == '>' || c == '&') {
      append_hex(out, static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string script_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size() + json_text.size() / 64);
  for (size_t i = 0; i < json_text.size(); ++i) {
    const char c = json_text[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (line_terminator(json_text, i)) {
      out += static_cast<unsigned char>(json_text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else
      out += c;
  }
  return out;
}

std::string utf8_prefix(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] starts the cut-off part
  return s.substr(0, n);
}

void escape_json_strings(nlohmann::json& j) {
  if (j.is_string()) {
    std::string& s = j.get_ref<std::string&>();
    if (needs_escape(s)) s = escape_name(s);
  } else if (j.is_array()) {
    for (auto& v : j) escape_json_strings(v);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bad_key = bad_key || needs_escape(it.key());
      escape_json_strings(it.value());
    }
    if (bad_key) {
      nlohmann::json fixed = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it) fixed[escape_name(it.key())] = std::move(it.value());
      j = std::move(fixed);
    }
  }
}

void write_output(const std::string& path, const std::string& what, const std::string& content) {
  // One way to write a file (core/output_file.h): never onto an input or a non-regular file, a
  // temporary renamed when complete, every write and the close checked. `what` reads "the SVG
  // timeline"; OutputFile's messages add the article themselves.
  const std::string noun = what.rfind("the ", 0) == 0 ? what.substr(4) : what;
  try {
    OutputFile f({noun, path});
    f.write(content);
    f.commit();
  } catch (const OutputError& e) {
    throw TraceError(e.what());
  }
}

}  // namespace laptime::trace
