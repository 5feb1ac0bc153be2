// Weights on their way to the device. A model first gathers every tensor it needs on the
// host as fp32 (HostWeights: read from a file and validated, folded, re-laid out, or drawn
// at random), then uploads them all at once, converted to the run's storage type, into one
// device allocation (DeviceWeights). Layers keep plain pointers into it.
//
// The upload is build-time device work, so it runs on ctx.stream() like everything after it
// (docs/DESIGN-NOTES.md, "The build contract"): what a model enqueues next on that stream (copies of the
// weights, fp8 quantization, prepare()'s trial runs) is ordered after it without an event.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "core/dtype.h"
#include "weights/safetensors.h"

namespace laptime {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

class HostWeights {
 public:
  void add(const std::string& name, std::vector<int64_t> shape, std::vector<float> values);
  // Reads `name` from `file`, checking its shape; throws a sentence naming file, tensor and shapes.
  void add_from(const SafeTensors& file, const std::string& name, const std::vector<int64_t>& shape);
  const HostTensor& at(const std::string& name) const;  // throws when absent
  const std::map<std::string, HostTensor>& all() const { return tensors_; }
  int64_t param_count() const;

 private:
  std::map<std::string, HostTensor> tensors_;
};

class DeviceWeights {
 public:
  DeviceWeights() = default;
  // One allocation for all of `host`, each tensor converted to `dtype` (F32 or BF16) in one
  // host staging buffer and copied up with one cudaMemcpyAsync on ctx.stream(); synchronizes
  // with that stream once, before the staging buffer goes. Build time.
  DeviceWeights(const Context& ctx, const HostWeights& host, DType dtype);

  const void* get(const std::string& name) const;  // throws when absent
  DType dtype() const { return dtype_; }
  std::size_t bytes() const { return buffer_.bytes(); }
  int64_t param_count() const { return params_; }

 private:
  DType dtype_ = DType::F32;
  DeviceBuffer buffer_;
  std::map<std::string, std::size_t> offsets_;
  int64_t params_ = 0;
};

// Seeded normal / uniform draws for random weights (std::mt19937_64; same seed, same weights).
class WeightRng {
 public:
  explicit WeightRng(uint64_t seed);
  std::vector<float> normal(int64_t n, float mean, float std);
  std::vector<float> uniform(int64_t n, float lo, float hi);

 private:
  uint64_t state_[4];
  double next_uniform();
};

}  // namespace laptime
