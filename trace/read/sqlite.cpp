#include "trace/read/sqlite.h"

#include <sys/stat.h>

#include <cctype>
#include <cstring>

namespace laptime::trace::sqlite {

std::string read_only_uri(const std::string& path) {
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
  struct stat wal {};
  const bool pending = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  return uri + (pending ? "?mode=ro" : "?immutable=1");
}

}  // namespace laptime::trace::sqlite
