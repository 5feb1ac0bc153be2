// laptime's fp8 recipe for GPT-2 (layers/linear.h, layers/fp8_weight.h) emulated on the CPU:
// an independent model of what `-p fp8` computes with every GEMM in e4m3, so a test can hold the
// device's error against the error the recipe itself costs the same model on the same batch,
// instead of against a bound picked by hand (flash-attention's way: a same-precision reference).
//
//   calibration  one exact forward over `calibration` records each GEMM input's amax;
//                s_x = margin · amax / 448 (1 where amax is 0)
//   weights      rounded to bf16 first (the device's storage), then s_w = amax / 448
//   products     x · (1/s_x) and W · (1/s_w) in float, rounded to e4m3 (nearest, ties to even,
//                saturating: tests/reference/fp8_ref.h), multiplied back by their scales and
//                summed in double, plus the bias
//   the rest     the oracle's (tests/reference/gpt2_ref.h): double, LayerNorm, attention, GELU,
//                the residual stream and the logits unrounded
// What it leaves out is laptime's bf16 rounding outside the GEMMs, about a tenth of e4m3's
// error on GPT-2 (bf16 end to end 1.1e-2 against fp8's 1.0e-1) and independent of it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/gpt2.h"
#include "tests/reference/gpt2_ref.h"

namespace laptime::ref {

// The recipe's two passes over any of gpt2_ref.h's functions (pass the hook as their `gemm`):
// record() takes each product's input amax on a calibration pass; e4m3() then runs the products
// on e4m3 operands with s_x = margin · amax / 448, or with the scale use_scale() set for that
// layer (a test holding one layer's device scales).
class Fp8Recipe {
 public:
  explicit Fp8Recipe(float margin);
  Fp8Recipe(const Fp8Recipe&) = delete;
  Fp8Recipe& operator=(const Fp8Recipe&) = delete;
  const GemmFn& record() const { return record_; }
  const GemmFn& e4m3() const { return e4m3_; }
  void use_scale(const std::string& name, float s_x) { scale_x_[name] = s_x; }

 private:
  float margin_;
  std::map<std::string, float> amax_x_, scale_x_;
  GemmFn record_, e4m3_;
};

Vec gpt2_fp8(const std::vector<int32_t>& tokens, const std::vector<int32_t>& calibration, const HostWeights& w,
             int n_layer, int n_head, int C, int vocab, float eps, int B, int T, float margin);

// The small GPT-2 the fp8 oracle tests share (test_fp8_layers.cpp on the device,
// test_fp8_reference.cpp's redraw spread on the host): 3 blocks, C=128, 2 heads, vocab 301,
// B=3, T=40; its random weights and two token batches, the calibration one first, from one seed.
struct SmallGpt2 {
  explicit SmallGpt2(uint64_t seed);
  Vec exact() const;            // the oracle's logits on `tokens`
  Vec fp8(float margin) const;  // the recipe's (gpt2_fp8), calibrated on `calibration`
  GPT2Config config;
  int B = 3, T = 40;
  HostWeights weights;
  std::vector<int32_t> calibration, tokens;
};

}  // namespace laptime::ref
