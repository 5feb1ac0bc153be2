// One kernel of the lab's registry (kernels/lab/registry.h) at one shape and precision on the
// device: its inputs (drawn on the device, read back for the CPU reference), its outputs, how
// each version is launched on them, and the reference of one output row. `laptime lab`
// (bench/lab/run.cpp) checks and times versions through this, and so do the GPU tests.
//
// Inputs by kind (each case says what "huge" means for its op, in its header comment):
//   Random  uniform values of the op's natural scale, fresh per seed;
//   Zeros   the activations zero (parameters stay random): a constant row, a uniform softmax;
//   Huge    values near the edge of what the op must survive: a mean far above the spread for a
//           LayerNorm, |x| of 1e4 for the GELU, 1e30 where the op only adds, saturation for
//           fp8, all-negative windows for the max pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "core/dtype.h"
#include "kernels/lab/registry.h"

namespace laptime::lab {

enum class InputKind { Random, Zeros, Huge };
const char* input_kind_name(InputKind k);

// A device tensor of the lab: n elements of `dtype` (F32, BF16, F8E4M3 or I32), with a guard of
// kGuardBytes on each side, a known pattern written once: download() finds a write outside the
// tensor there (an off-by-one row, a tail written twice), says so in one sentence and restores
// the guard. A write farther away faults, or lands in another buffer unseen.
class LabTensor {
 public:
  LabTensor() = default;
  LabTensor(DType dtype, int64_t n);
  void fill(uint32_t seed, float offset, float scale, cudaStream_t stream);  // uniform in offset ± scale (F32, BF16)
  void zero(cudaStream_t stream);
  void poison(cudaStream_t stream);  // every byte 0xff: NaN in F32, BF16 and e4m3
  void copy_from(const LabTensor& src, cudaStream_t stream);
  void upload(const std::vector<int32_t>& values);  // I32; synchronous
  void upload(const std::vector<float>& values);    // F32; synchronous
  // The values as floats (e4m3 decoded, I32 converted); waits for `stream` first. Throws Error
  // when a guard was written (the guards are restored first).
  std::vector<float> download(cudaStream_t stream) const;
  void* data() const { return static_cast<char*>(buf_.data()) + kGuardBytes; }
  static constexpr std::size_t kGuardBytes = 64 * 1024;
  int64_t size() const { return n_; }
  DType dtype() const { return dtype_; }

 private:
  void write_guards() const;
  std::string guard_breach() const;  // "" when both guards hold their pattern

  DType dtype_ = DType::F32;
  int64_t n_ = 0;
  DeviceBuffer buf_;
};

class LabCase {
 public:
  virtual ~LabCase() = default;
  // Draws the inputs of `kind` on the device: what each timed call starts from, too (fresh inputs
  // a call, so a kernel cannot keep an answer from the call before).
  virtual void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t stream) = 0;
  // Reads the inputs drawn last back for the reference (waits for the stream).
  virtual void read_inputs(cudaStream_t stream) = 0;
  void set_inputs(InputKind kind, uint32_t seed, cudaStream_t stream) {
    draw_inputs(kind, seed, stream);
    read_inputs(stream);
  }
  // Builds what version `index` needs beyond the inputs (scratch, a library's plan) once; "" when
  // it can then run this case, else why not (one sentence: the version is "n/a" here).
  virtual std::string prepare(int index, Context& ctx) { return ""; }
  // Before each call that is checked or timed: the outputs poisoned, in-place inputs restored to
  // what draw_inputs drew, an accumulator (amax) zeroed.
  virtual void reset(cudaStream_t stream) = 0;
  // Enqueues one call of version `index` on ctx's stream (prepared).
  virtual void run(int index, const Context& ctx) = 0;
  // The outputs read back, rows() x row_width() floats; waits for the stream.
  virtual std::vector<float> outputs(cudaStream_t stream) = 0;
  // The reference of output row `row` into ref[row_width()]. `out` is what outputs() returned
  // (residual_layernorm normalises the x + r the kernel wrote, itself checked against x + r).
  virtual void reference(int64_t row, const std::vector<float>& out, float* ref) const = 0;
  int64_t rows() const { return rows_; }
  int64_t row_width() const { return width_; }
  // Rows a check compares at most: the reference's cost per row decides (attention's is T·C).
  virtual int64_t max_checked_rows() const;

 protected:
  int64_t rows_ = 0, width_ = 0;
};

// The case of kernel `k` at `shape` in `precision` ("fp32", "bf16", "fp8"); its device memory is
// allocated here (an out-of-memory is one sentence).
std::unique_ptr<LabCase> make_case(const KernelInfo& k, const Shape& shape, const std::string& precision);

// The storage type of a precision's data: F32 for fp32, BF16 for bf16 and fp8 (quantized from bf16).
DType lab_dtype(const std::string& precision);

}  // namespace laptime::lab
