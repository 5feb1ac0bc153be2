// Loading the committed PyTorch fixtures (tests/golden/, made by make_golden.py).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "weights/safetensors.h"

namespace laptime::test {

// The checkout's root: $LAPTIME_SOURCE_DIR when set (a build carried to another machine),
// else the one the tests were configured from.
inline std::string source_dir() {
  const char* env = std::getenv("LAPTIME_SOURCE_DIR");
  return env && *env ? env : LAPTIME_SOURCE_DIR;
}

inline std::string golden_path(const std::string& file) { return source_dir() + "/tests/golden/" + file; }

inline std::vector<float> golden(const SafeTensors& f, const std::string& name) { return f.to_float(f.get(name)); }

inline std::vector<int32_t> golden_tokens(const SafeTensors& f) {
  const TensorInfo& t = f.get("tokens");
  const auto* p = reinterpret_cast<const int32_t*>(t.data);
  return std::vector<int32_t>(p, p + t.numel());
}

}  // namespace laptime::test
