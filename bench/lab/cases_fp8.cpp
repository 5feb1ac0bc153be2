// The lab's cases for fp8's kernels (bench/lab/case.h): bf16 data, as -p fp8 quantizes it.
// The inverse scale maps |x| = 1 to 224 (a calibration margin of 2, layers/fp8_weight.h). "Huge":
// |x| up to 100, so most products pass 448 and must saturate; for amax, magnitudes of 1e30.
#include "bench/lab/cases.h"
#include "core/check.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/reference.h"

namespace laptime::lab {
namespace {

constexpr float kInvScale = 224.f;

class QuantizeCase : public LabCase {
 public:
  QuantizeCase(int64_t rows, int64_t C)
      : C_(C), in_(DType::BF16, rows * C), inv_scale_(DType::F32, 1), out_(DType::F8E4M3, rows * C) {
    rows_ = rows;
    width_ = C;
    inv_scale_.upload(std::vector<float>{kInvScale});
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(in_, kind, seed, 1.f, 0.f, 100.f, s);
  }
  void read_inputs(cudaStream_t s) override { h_in_ = in_.download(s); }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    quantize_version(index)({out_.data(), static_cast<const float*>(inv_scale_.data()), in_.data(), in_.size()},
                            ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::quantize_row(ref, &h_in_[static_cast<size_t>(row * C_)], kInvScale, C_);
  }

 private:
  int64_t C_;
  LabTensor in_, inv_scale_, out_;
  std::vector<float> h_in_;
};

class AmaxCase : public LabCase {
 public:
  explicit AmaxCase(int64_t n) : in_(DType::BF16, n), amax_(DType::F32, 1) {
    rows_ = 1;
    width_ = 1;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(in_, kind, seed, 1.f, 0.f, 1e30f, s);
  }
  void read_inputs(cudaStream_t s) override {
    const std::vector<float> h = in_.download(s);
    amax_ref_ = ref::amax(h.data(), static_cast<int64_t>(h.size()));
  }
  void reset(cudaStream_t s) override { amax_.zero(s); }  // the contract: the caller zeroes it
  void run(int index, const Context& ctx) override {
    amax_version(index)({static_cast<float*>(amax_.data()), in_.data(), in_.size()}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return amax_.download(s); }
  void reference(int64_t, const std::vector<float>&, float* ref) const override { ref[0] = amax_ref_; }

 private:
  LabTensor in_, amax_;
  float amax_ref_ = 0.f;
};

}  // namespace

std::unique_ptr<LabCase> make_quantize_case(const std::vector<int64_t>& d) {
  return std::make_unique<QuantizeCase>(d[0], d[1]);
}
std::unique_ptr<LabCase> make_amax_case(const std::vector<int64_t>& d) {
  return std::make_unique<AmaxCase>(d[0] * d[1]);
}

}  // namespace laptime::lab
