// The fp8 half of a layer whose work is one GEMM with a weight (Linear; a 1×1 Conv2d, which in
// NHWC is the GEMM y[N·H·W, out] = x[N·H·W, in] · Wᵀ): its weight in e4m3 with a per-tensor
// scale, and its input's static per-tensor scale from one calibration pass. The recipe and why
// per tensor are in layers/linear.h; both layers share this one implementation of it.
//
//   weight   s_w = amax(W) / 448, W8 = e4m3(W / s_w): made once, from the bf16 copy, on ctx's stream.
//   input    s_x = margin · amax(x) / 448, amax recorded on the stream while the bf16 plan runs
//            (begin_calibration(), record_input() per forward, end_calibration(): one host wait).
//            Until then s_x = 1, which is all the timing runs in prepare() need (finite scales).
//
// The scales live in one small device buffer that never moves, each float in a 16-byte slot of
// its own: their addresses go into cuBLASLt's descriptors and into the quantize kernels, and
// cuBLASLt refuses, at run time and with NOT_SUPPORTED, a scale at base + 4 (the first H200 probe:
// every fp8 Linear plan failed to run with its two scales packed side by side).
//
// The switches that steer the choice (LAPTIME_FP8_GEMM, LAPTIME_FP8_FAST_ACCUM, LAPTIME_FP8_MLP)
// and their enums (Fp8Policy, Fp8Pairing) are in core/env_switches.h, with every other switch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/buffer.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/env_switches.h"

namespace laptime {

// "" when `ctx`'s GPU and this build can run fp8 (compute capability 8.9 or newer, and a build
// with sm_89+ code); else the sentence that refuses `-p fp8`.
std::string fp8_refusal(const Context& ctx);
bool fp8_in_build();  // this build has sm_89+ code (CMAKE_CUDA_ARCHITECTURES)

// The activations' margin over the calibration batch's amax: s_x maps amax to 448 / 2, leaving one
// binade for batches that reach further (values beyond saturate to ±448 instead of becoming NaN).
constexpr float kFp8ActivationMargin = 2.f;

class Fp8Weight {
 public:
  // Quantizes `n` elements of `weight` (bf16, [out, in]) and sets s_w; s_x = 1 until calibrated.
  // `name` is the layer's, for the sentences. Synchronizes once (s_w is read back). Build time.
  void make(const Context& ctx, const void* weight, DType dtype, int64_t n, const std::string& name);
  bool made() const { return scales_.data() != nullptr; }

  const void* weight8() const { return weight8_.data(); }            // [out, in] e4m3
  const float* weight_scale() const { return slot(kScaleW); }        // s_w, device
  const float* input_scale() const { return slot(kScaleX); }         // s_x, device
  const float* input_inv_scale() const { return slot(kInvScaleX); }  // 1/s_x, device: what x8's producer multiplies by

  // Calibration (see the top). record_input() enqueues amax(x) on ctx's stream; end() waits once.
  void begin_calibration(const Context& ctx);
  void record_input(const Context& ctx, const void* x, DType dtype, int64_t n) const;
  void end_calibration(const Context& ctx, float margin);
  bool calibrated() const { return calibrated_; }
  // {s_w, s_x} as the device holds them (tests, reports); {1, 1} before make(). Synchronizes.
  std::pair<float, float> scales(const Context& ctx) const;

 private:
  enum Slot : int { kScaleW, kScaleX, kInvScaleX, kAmaxX, kInvScaleW, kAmaxW, kSlots };
  static constexpr int kSlotFloats = 4;  // 16 bytes a slot
  float* slot(Slot s) const { return scales_.as<float>() + s * kSlotFloats; }

  std::string name_;
  DeviceBuffer weight8_;  // [out, in] e4m3
  DeviceBuffer scales_;   // kSlots slots of kSlotFloats floats
  bool calibrated_ = false;
};

// One activation tensor's static per-tensor scale, apart from any weight: the tensors of fp8
// ResNet-50's e4m3 stream (the stem's output, each block's output and downsample output: layers/
// e4m3_block.h), calibrated as Fp8Weight's input is (s = margin · amax / 448 over one bf16 pass).
// Its floats in 16-byte slots of one buffer that never moves; s = 1 until calibrated.
class Fp8Scale {
 public:
  // `what` names the tensor in the sentences ("the output of layer2.0"). Synchronizes. Build time.
  void make(const Context& ctx, const std::string& what);
  bool made() const { return slots_.data() != nullptr; }
  const float* scale() const { return slot(kScale); }         // s: what a reader multiplies by
  const float* inv_scale() const { return slot(kInvScale); }  // 1/s: what the producer multiplies by
  void begin_calibration(const Context& ctx);
  void record(const Context& ctx, const void* x, DType dtype, int64_t n) const;  // amax on the stream
  void end_calibration(const Context& ctx, float margin);                        // one host wait
  bool calibrated() const { return calibrated_; }
  float value(const Context& ctx) const;  // s as the device holds it (tests, reports). Synchronizes.

 private:
  enum Slot : int { kScale, kInvScale, kAmax, kSlots };
  static constexpr int kSlotFloats = 4;
  float* slot(Slot s) const { return slots_.as<float>() + s * kSlotFloats; }

  std::string what_;
  DeviceBuffer slots_;
  bool calibrated_ = false;
};

}  // namespace laptime
