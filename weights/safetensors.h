// The safetensors reader: memory-maps a file (or adopts an in-memory image), validates the
// header strictly, and exposes name -> dtype/shape/bytes plus the __metadata__ map.
//
// File layout (https://github.com/huggingface/safetensors): 8-byte little-endian header
// length N, N bytes of JSON header, then the data section. Each header entry is
// {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} with offsets relative to the
// data section. Validation rejects, with one sentence naming the file: a header length past
// kMaxHeaderBytes or past the file, malformed JSON, JSON nested past kMaxHeaderDepth, an unknown
// dtype, a shape whose element count or byte size overflows 64 bits, shape x dtype size !=
// byte range, a range outside the data section, and non-string metadata. As in the reference
// reader, the tensors must tile the data section exactly: overlaps, holes between tensors and
// bytes after the last one are refused. Nothing recursive runs on the parsed header, and
// messages quote untrusted values (names, dtypes, offsets) as bounded excerpts.
//
// Our tensor names, layouts and metadata keys: weights/FORMAT.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace laptime {

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;  // inside the mapped file; valid while the SafeTensors lives
  std::size_t nbytes = 0;

  int64_t numel() const;  // throws laptime::Error when the shape is negative or overflows
};

class SafeTensors {
 public:
  static constexpr std::size_t kMaxHeaderBytes = 100'000'000;  // the reference reader's bound
  // JSON nesting allowed in a header (a valid one needs 3); the bound serde_json, which the
  // reference reader parses with, applies by default.
  static constexpr std::size_t kMaxHeaderDepth = 128;

  // Maps and validates `path`. Throws laptime::Error with one sentence on any problem.
  static SafeTensors open(const std::string& path);
  // Validates an in-memory image (`source` names it in messages).
  static SafeTensors from_bytes(std::vector<std::byte> bytes, const std::string& source);

  SafeTensors(SafeTensors&&) noexcept;
  SafeTensors& operator=(SafeTensors&&) noexcept;
  ~SafeTensors();

  const std::string& source() const;
  const std::vector<TensorInfo>& tensors() const;         // in data-offset order
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent

  // The tensor `name`; throws "tensor 'name' is missing from <source>" when absent.
  const TensorInfo& get(const std::string& name) const;
  // get() plus a shape check; throws "tensor 'name' in <source> has shape [a, b], expected [c, d]".
  const TensorInfo& get(const std::string& name, const std::vector<int64_t>& shape) const;

  // Elements as float (F32, F16, BF16, F64 accepted; integer dtypes are rejected with a sentence).
  std::vector<float> to_float(const TensorInfo& t) const;

  const std::map<std::string, std::string>& metadata() const;
  // A metadata value; throws "metadata key 'k' is missing from <source>" when absent,
  // and a sentence naming key and value when it does not parse.
  const std::string& meta(const std::string& key) const;
  int64_t meta_int(const std::string& key) const;
  double meta_double(const std::string& key) const;

 private:
  struct Impl;
  explicit SafeTensors(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A tensor to serialize: name, dtype, shape and its raw little-endian bytes.
struct TensorBlob {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

// Serializes tensors and metadata to a safetensors image (used for seeded random weights
// and by tests to craft files). The inverse of from_bytes().
std::vector<std::byte> serialize_safetensors(const std::vector<TensorBlob>& tensors,
                                             const std::map<std::string, std::string>& metadata);

}  // namespace laptime
