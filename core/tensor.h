// A non-owning view of a tensor: pointer, dtype, shape. Used at module boundaries (the
// weights loader, model inputs/outputs); inside layers, raw pointers and named dimensions
// keep shapes visible at the call site.
#pragma once

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace laptime {

struct Tensor {
  void* data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  int64_t numel() const { return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>()); }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  template <class T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

std::string shape_str(const std::vector<int64_t>& shape);  // "[3, 768]"

}  // namespace laptime
