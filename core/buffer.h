// Device memory: a move-only owning buffer, and the layout helper that carves one
// allocation into many slots (weights, activations). Everything is allocated at model
// build; forward() never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_runtime.h>

#include "core/check.h"

namespace laptime {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // no check: destructors must not throw
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as(std::size_t byte_offset = 0) const {
    return reinterpret_cast<T*>(static_cast<char*>(ptr_) + byte_offset);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Plans byte offsets of many slots inside one allocation. Each slot is 256-byte aligned,
// which satisfies cuBLASLt's and cuDNN's alignment preferences and 16-byte vector loads.
class ArenaLayout {
 public:
  static constexpr std::size_t kAlign = 256;
  std::size_t reserve(std::size_t bytes) {
    const std::size_t offset = total_;
    total_ += (bytes + kAlign - 1) / kAlign * kAlign;
    return offset;
  }
  std::size_t bytes() const { return total_; }

 private:
  std::size_t total_ = 0;
};

}  // namespace laptime
