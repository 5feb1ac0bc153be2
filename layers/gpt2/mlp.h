// GPT-2 MLP: y (+)= gelu(x · W_fcᵀ + b_fc) · W_projᵀ + b_proj, hidden width 4C.
//   h.i.mlp.c_fc    cuBLASLt; with the GELU in its epilogue (GELU_BIAS) where chosen
//   h.i.mlp.gelu    the GELU kernel, only when it is not in the epilogue
//   h.i.mlp.c_proj  cuBLASLt; Accumulate::Add fuses the residual
// fp8 (layers/linear.h): each GEMM runs in e4m3 where that measured faster, and the two are
// chosen as a pair. Alone, c_proj would quantize its bf16 input itself (a pass over the [rows,
// 4C] hidden activation: ~19 µs of its 52 at B8 T1024 on an H200) and c_fc would write bf16; as a
// pair, c_fc's epilogue writes the GELU output in e4m3 with c_proj's scale (half the hidden's
// bytes) and c_proj reads it with no quantize pass. prepare() times c_proj (bf16; fp8 with its
// quantize; its fp8 GEMM alone) and c_fc (bf16; fp8; fp8 writing e4m3), then keeps the pair where
// c_fc's e4m3-output time plus c_proj's GEMM alone is less than the better of each layer on its
// own added up (choose_fp8_pair). The first fp8 probes chose c_proj alone first, timed with its
// quantize, so it lost by 0.6 µs and the pair never ran (docs/history/gpt2-notes.md);
// LAPTIME_FP8_MLP=apart keeps that rule. The residual stream c_proj adds into stays bf16 (an
// fp8 residual would round the whole stream to 3 mantissa bits at every block).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/device_weights.h"
#include "layers/fp8_weight.h"
#include "layers/gemm_tuner.h"
#include "layers/linear.h"

namespace laptime {

// Where the GELU runs. Auto: the epilogue in bf16 and tf32 (measured faster, within the
// bounds), the kernel in strict fp32 (see MLP::gelu_in_epilogue_by_default).
enum class GeluPlacement { Auto, Epilogue, Kernel };

// fp8: the choice for c_fc and c_proj together, from what each layer's prepare() measured.
struct Fp8PairChoice {
  bool pair = false;      // c_fc writes e4m3, c_proj reads it (no quantize pass)
  float pair_ms = -1.f;   // c_fc's fp8 with e4m3 out + c_proj's fp8 GEMM alone; negative: cannot run
  float apart_ms = -1.f;  // the better of each on its own, added up; negative: a time is missing
  std::string why;        // why the pair was not weighed, when it was not
};
// Host-only arithmetic (tests/test_fp8_layers.cpp checks it without a GPU). With Fp8Policy::Always
// the pair wherever it can run, with Never never; with Auto and Fp8Pairing::Pair the faster of
// the pair and apart (apart where a time is missing); with Fp8Pairing::Apart the pair only where
// both layers chose fp8 on their own (the first probes' rule).
Fp8PairChoice choose_fp8_pair(const GemmTuner::Fp8Choice& c_fc, const GemmTuner::Fp8Choice& c_proj, Fp8Policy policy,
                              Fp8Pairing pairing);

class MLP {
 public:
  // Weights `<prefix>.c_fc.{weight,bias}` [4C, C], [4C] and `<prefix>.c_proj.{weight,bias}` [C, 4C], [C].
  MLP(const DeviceWeights& w, const std::string& prefix, int C, Precision precision,
      GeluPlacement gelu = GeluPlacement::Auto);

  static bool gelu_in_epilogue_by_default(Precision p);

  std::size_t scratch_bytes(int B, int T) const;
  void prepare(const Context& ctx, int rows, GemmTuner* tuner = nullptr);
  // y, x: [rows, C]; scratch: scratch_bytes bytes (the [rows, 4C] hidden activation).
  void forward(const Context& ctx, void* y, const void* x, int rows, void* scratch, Accumulate acc) const;
  bool gelu_in_epilogue() const { return c_fc_.gelu_fused(); }
  // Its range and those inside it (c_fc, gelu when it is a kernel, c_proj) for `rows`, as
  // prepared, with what each computes and moves (layers/layer_cost.h); `acc` as forward() gets it.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int rows, Accumulate acc) const;

  // fp8: what x must be for forward(rows) (F8E4M3 when c_fc reads fp8), and its inverse scale.
  DType input_dtype(int rows) const { return c_fc_.input_dtype(rows); }
  const float* input_inv_scale() const { return c_fc_.input_inv_scale(); }
  // fp8 calibration of both GEMMs (layers/linear.h).
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);
  const Linear& c_fc() const { return c_fc_; }
  const Linear& c_proj() const { return c_proj_; }
  // fp8: one line on the pair's choice at `rows`, both times ("the pair: pair 82.1 us (c_fc e4m3
  // out 50.2 + c_proj without its quantize 31.9), against apart 105.3 us (c_fc fp8 53.6 + c_proj
  // bf16 51.7)"); "" where no pair was weighed (other precisions, the GELU as a kernel).
  std::string fp8_report(int rows) const;

 private:
  NvtxName name_, c_fc_name_, gelu_name_, c_proj_name_;
  int C_;
  DType dtype_;
  Precision precision_;
  Linear c_fc_;                             // [4C, C]
  Linear c_proj_;                           // [C, 4C]
  std::map<int, Fp8PairChoice> fp8_pairs_;  // by rows, fp8 with the GELU in the epilogue only
};

}  // namespace laptime
