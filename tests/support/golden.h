// Loading the committed PyTorch fixtures (tests/golden/, made by make_golden.py).
#pragma once

#include <string>
#include <vector>

#include "weights/safetensors.h"

namespace laptime::test {

inline std::string golden_path(const std::string& file) {
  return std::string(LAPTIME_SOURCE_DIR) + "/tests/golden/" + file;
}

inline std::vector<float> golden(const SafeTensors& f, const std::string& name) { return f.to_float(f.get(name)); }

inline std::vector<int32_t> golden_tokens(const SafeTensors& f) {
  const TensorInfo& t = f.get("tokens");
  const auto* p = reinterpret_cast<const int32_t*>(t.data);
  return std::vector<int32_t>(p, p + t.numel());
}

}  // namespace laptime::test
