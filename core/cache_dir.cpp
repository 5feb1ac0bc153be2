#include "core/cache_dir.h"

#include <cstdlib>

namespace laptime {

std::string laptime_cache_dir() {
  if (const char* d = std::getenv("LAPTIME_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/laptime";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/laptime";
  return ".";
}

}  // namespace laptime
