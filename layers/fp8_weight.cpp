#include "layers/fp8_weight.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/check.h"
#include "kernels/fp8.cuh"

namespace laptime {

namespace {

float read_float(const Context& ctx, const float* p) {
  float v = 0.f;
  CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return v;
}

void write_float(const Context& ctx, float* dst, float v) {
  CUDA_CHECK(cudaMemcpyAsync(dst, &v, sizeof v, cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));  // v is about to go out of scope
}

// s = margin · amax / 448: the scale that maps amax to 448 / margin. An all-zero tensor takes 1
// (any scale represents it); a non-finite amax is refused.
float scale_from_amax(float amax, float margin, const std::string& what) {
  require(std::isfinite(amax), "fp8 calibration: " + what + " holds a value that is not finite (amax " +
                                   std::to_string(amax) + "); it cannot be given a scale.");
  return amax > 0.f ? margin * amax / kE4M3Max : 1.f;
}

}  // namespace

bool fp8_in_build() { return LAPTIME_FP8_BUILD != 0; }

std::string fp8_refusal(const Context& ctx) {
  const int cc = ctx.props().major * 10 + ctx.props().minor;
  if (cc < 89)
    return "-p fp8 needs a GPU of compute capability 8.9 or newer (fp8 tensor cores: Ada, Hopper); this " +
           std::string(ctx.props().name) + " is " + std::to_string(ctx.props().major) + "." +
           std::to_string(ctx.props().minor) + ".";
  if (!LAPTIME_FP8_BUILD)
    return std::string(
               "-p fp8 needs a build with sm_89 or newer code; this one was built for CMAKE_CUDA_ARCHITECTURES=") +
           LAPTIME_CUDA_ARCHITECTURES + " (rebuild with 90 for Hopper).";
  return "";
}

void Fp8Weight::make(const Context& ctx, const void* weight, DType dtype, int64_t n, const std::string& name) {
  require(dtype == DType::BF16,
          "internal: fp8 layer '" + name + "' needs bf16 weights, not " + std::string(dtype_name(dtype)) + ".");
  name_ = name;
  scales_ = DeviceBuffer(kSlots * kSlotFloats * sizeof(float));
  CUDA_CHECK(cudaMemsetAsync(scales_.data(), 0, scales_.bytes(), ctx.stream()));
  amax_forward(slot(kAmaxW), dtype, weight, n, ctx.stream());
  const float s_w = scale_from_amax(read_float(ctx, slot(kAmaxW)), 1.f, "the weight of '" + name + "'");
  const std::vector<float> init{s_w, 1.f, 1.f, 0.f, 1.f / s_w};  // kScaleW .. kInvScaleW; s_x = 1 until calibrated
  for (int i = 0; i < static_cast<int>(init.size()); ++i)
    CUDA_CHECK(
        cudaMemcpyAsync(slot(static_cast<Slot>(i)), &init[i], sizeof(float), cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));  // init is about to go out of scope
  weight8_ = DeviceBuffer(static_cast<std::size_t>(n));
  quantize_fp8(weight8_.data(), slot(kInvScaleW), dtype, weight, n, ctx.stream());
}

void Fp8Weight::begin_calibration(const Context& ctx) {
  require(made(), "internal: calibration of fp8 layer '" + name_ + "' before its weight was made.");
  CUDA_CHECK(cudaMemsetAsync(slot(kAmaxX), 0, sizeof(float), ctx.stream()));
}

void Fp8Weight::record_input(const Context& ctx, const void* x, DType dtype, int64_t n) const {
  amax_forward(slot(kAmaxX), dtype, x, n, ctx.stream());
}

void Fp8Weight::end_calibration(const Context& ctx, float margin) {
  const float s_x = scale_from_amax(read_float(ctx, slot(kAmaxX)), margin, "the input of '" + name_ + "'");
  write_float(ctx, slot(kScaleX), s_x);
  write_float(ctx, slot(kInvScaleX), 1.f / s_x);
  calibrated_ = true;
}

std::pair<float, float> Fp8Weight::scales(const Context& ctx) const {
  if (!made()) return {1.f, 1.f};
  return {read_float(ctx, slot(kScaleW)), read_float(ctx, slot(kScaleX))};
}

void Fp8Scale::make(const Context& ctx, const std::string& what) {
  what_ = what;
  slots_ = DeviceBuffer(kSlots * kSlotFloats * sizeof(float));
  CUDA_CHECK(cudaMemsetAsync(slots_.data(), 0, slots_.bytes(), ctx.stream()));
  write_float(ctx, slot(kScale), 1.f);
  write_float(ctx, slot(kInvScale), 1.f);
}

void Fp8Scale::begin_calibration(const Context& ctx) {
  require(made(), "internal: calibration of the fp8 scale of " + what_ + " before it was made.");
  CUDA_CHECK(cudaMemsetAsync(slot(kAmax), 0, sizeof(float), ctx.stream()));
}

void Fp8Scale::record(const Context& ctx, const void* x, DType dtype, int64_t n) const {
  amax_forward(slot(kAmax), dtype, x, n, ctx.stream());
}

void Fp8Scale::end_calibration(const Context& ctx, float margin) {
  const float s = scale_from_amax(read_float(ctx, slot(kAmax)), margin, what_);
  write_float(ctx, slot(kScale), s);
  write_float(ctx, slot(kInvScale), 1.f / s);
  calibrated_ = true;
}

float Fp8Scale::value(const Context& ctx) const { return made() ? read_float(ctx, slot(kScale)) : 1.f; }

}  // namespace laptime
