// libFuzzer target for the safetensors reader (build: tests/fuzz/CMakeLists.txt, run:
// tests/fuzz/run.sh). Every input must either load or be refused with a laptime::Error; any
// other exception, a crash, or an AddressSanitizer/UndefinedBehaviorSanitizer report is a
// finding. A loaded file is then used the way the models use one, and the reader's promises
// are checked: each tensor lies inside the image, its byte count is numel x element size, the
// tensors tile the data section, and every metadata accessor answers or refuses.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/check.h"
#include "weights/safetensors.h"

namespace {

void expect(bool cond, const char* what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz_safetensors: broken promise: %s\n", what);
    std::abort();
  }
}

// `data_begin`/`data_size`: the data section of the input, from its header length field.
void exercise(const laptime::SafeTensors& st, const std::byte* data_begin, uint64_t data_size) {
  const std::byte* data_end = data_begin + data_size;
  uint64_t covered = 0;
  for (const laptime::TensorInfo& t : st.tensors()) {
    expect(t.data >= data_begin && t.data <= data_end && t.nbytes <= static_cast<std::size_t>(data_end - t.data),
           "a tensor's bytes lie inside the data section");
    expect(t.data == data_begin + covered, "each tensor starts where the previous one ends");
    covered += t.nbytes;
    const int64_t n = t.numel();
    expect(n >= 0 && static_cast<uint64_t>(n) * laptime::dtype_size(t.dtype) == t.nbytes,
           "nbytes == numel x element size");
    expect(st.find(t.name) == &t, "every tensor is found by its name");
    if (t.dtype == laptime::DType::F32 || t.dtype == laptime::DType::F16 || t.dtype == laptime::DType::BF16 ||
        t.dtype == laptime::DType::F64) {
      expect(st.to_float(t).size() == static_cast<std::size_t>(n), "to_float returns numel values");
    } else {
      try {
        st.to_float(t);
        expect(false, "to_float refuses integer dtypes");
      } catch (const laptime::Error&) {
      }
    }
  }
  expect(covered == data_size, "the tensors cover the data section exactly");
  for (const auto& [key, value] : st.metadata()) {
    expect(&st.meta(key) == &value, "every metadata key is found");
    try {
      st.meta_int(key);
    } catch (const laptime::Error& e) {
      expect(std::string(e.what()).size() < 1024, "error messages are bounded");
    }
    try {
      st.meta_double(key);
    } catch (const laptime::Error& e) {
      expect(std::string(e.what()).size() < 1024, "error messages are bounded");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(data[i]);
  try {
    const laptime::SafeTensors st = laptime::SafeTensors::from_bytes(bytes, "fuzz input");
    expect(size >= 8, "a loaded file has a length field");
    uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= static_cast<uint64_t>(data[i]) << (8 * i);
    expect(header <= size - 8, "a loaded file holds its header");
    // The reader keeps its own copy of `bytes`: find its data section through the first tensor.
    if (!st.tensors().empty())
      exercise(st, st.tensors().front().data, size - 8 - header);
    else
      expect(size - 8 == header, "a file without tensors has no data section");
  } catch (const laptime::Error& e) {
    // Refused with a sentence: expected for almost every input. Messages stay short.
    expect(std::string(e.what()).size() < 1024, "error messages are bounded");
  }
  return 0;
}
