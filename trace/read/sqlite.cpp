#include "trace/read/sqlite.h"

#include <sys/stat.h>

#include <cctype>
#include <cstring>

namespace laptime::trace::sqlite {

std::string read_only_uri(const std::string& path) {
  struct stat wal {};
  const bool pending = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  return file_uri(path, pending ? "mode=ro" : "immutable=1");
}

std::string file_uri(const std::string& path, const std::string& query) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";  // an empty authority before an absolute path
  for (const unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?" + query;
}

bool only_white_space(const char* tail) {
  // sqlite3_complete-style scan: spaces, -- line comments and /* */ comments only.
  for (const char* p = tail; p && *p;) {
    if (std::isspace(static_cast<unsigned char>(*p))) {
      ++p;
    } else if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char* end = std::strstr(p + 2, "*/");
      if (!end) return true;  // an unterminated comment runs to the end
      p = end + 2;
    } else {
      return false;
    }
  }
  return true;
}

void Db::exec(const std::string& sql) const {
  Stmt s(db_, sql);
  while (s.step()) {
  }
}

}  // namespace laptime::trace::sqlite
