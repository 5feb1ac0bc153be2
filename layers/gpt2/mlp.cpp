#include "layers/gpt2/mlp.h"

#include <iomanip>
#include <sstream>

#include "kernels/gelu.cuh"

namespace laptime {

bool MLP::gelu_in_epilogue_by_default(Precision p) { return p != Precision::FP32; }

MLP::MLP(const DeviceWeights& w, const std::string& prefix, int C, Precision precision, GeluPlacement gelu)
    : name_(prefix),
      c_fc_name_(prefix + ".c_fc"),
      gelu_name_(prefix + ".gelu"),
      c_proj_name_(prefix + ".c_proj"),
      C_(C),
      dtype_(w.dtype()),
      precision_(precision),
      c_fc_(w, prefix + ".c_fc", C, 4 * C, precision, HasBias::Yes),
      c_proj_(w, prefix + ".c_proj", 4 * C, C, precision, HasBias::Yes) {
  if (gelu == GeluPlacement::Epilogue || (gelu == GeluPlacement::Auto && gelu_in_epilogue_by_default(precision)))
    c_fc_.fuse_gelu();
  c_proj_.set_fp8_input(Fp8Input::Quantize);  // until c_fc is known to write fp8 (prepare)
}

std::size_t MLP::scratch_bytes(int B, int T) const {
  return static_cast<std::size_t>(B) * T * 4 * C_ * dtype_size(dtype_);
}

Fp8PairChoice choose_fp8_pair(const GemmTuner::Fp8Choice& fc, const GemmTuner::Fp8Choice& proj, Fp8Policy policy,
                              Fp8Pairing pairing) {
  Fp8PairChoice c;
  const float fc_alone = fc.fp8 ? fc.fp8_ms : fc.bf16_ms, proj_alone = proj.fp8 ? proj.fp8_ms : proj.bf16_ms;
  if (fc_alone >= 0.f && proj_alone >= 0.f) c.apart_ms = fc_alone + proj_alone;
  if (fc.fp8_out8_ms >= 0.f && proj.fp8_gemm_ms >= 0.f) c.pair_ms = fc.fp8_out8_ms + proj.fp8_gemm_ms;
  if (policy == Fp8Policy::Never) {
    c.why = "LAPTIME_FP8_GEMM=bf16";
  } else if (pairing == Fp8Pairing::Apart) {
    c.pair = fc.fp8 && proj.fp8 && fc.fp8_out8_ms >= 0.f;
    c.why = "LAPTIME_FP8_MLP=apart";
  } else if (c.pair_ms < 0.f) {
    c.why = fc.fp8_out8_ms < 0.f ? "c_fc has no e4m3 output" : "c_proj's fp8 GEMM on an e4m3 input did not run";
  } else if (policy == Fp8Policy::Always) {
    c.pair = true;
  } else if (c.apart_ms < 0.f) {
    c.pair = fc.fp8 && proj.fp8;  // a time apart is missing: the rule that needs none
    c.why = "a time apart is missing";
  } else {
    c.pair = c.pair_ms < c.apart_ms;
  }
  return c;
}

void MLP::prepare(const Context& ctx, int rows, GemmTuner* tuner) {
  // c_proj first: c_fc's e4m3 output is scaled by c_proj's input scale (see mlp.h).
  c_proj_.prepare(ctx, rows, tuner);
  if (precision_ != Precision::FP8 || !c_fc_.gelu_fused()) {  // no e4m3 output without the GELU epilogue
    c_fc_.prepare(ctx, rows, tuner);
    return;
  }
  const Fp8Pairing pairing = env::fp8_mlp();
  // Apart, as the first probes ran it: c_fc is offered the e4m3 output only where c_proj chose fp8 alone.
  const bool offer = pairing == Fp8Pairing::Pair || c_proj_.runs_fp8(rows);
  c_fc_.set_fp8_output(offer ? c_proj_.input_inv_scale() : nullptr);
  c_fc_.prepare(ctx, rows, tuner);
  Fp8PairChoice pair = choose_fp8_pair(c_fc_.fp8_choice(rows), c_proj_.fp8_choice(rows), env::fp8_gemm(), pairing);
  pair.pair = pair.pair && c_fc_.can_write_fp8_output(rows) && c_proj_.can_read_fp8_input(rows);
  if (pair.pair) {
    c_fc_.write_fp8_output(rows);
    c_proj_.input_produced_in_fp8(rows);
  }
  fp8_pairs_[rows] = pair;
}

std::string MLP::fp8_report(int rows) const {
  const auto it = fp8_pairs_.find(rows);
  if (it == fp8_pairs_.end()) return "";
  const Fp8PairChoice& p = it->second;
  const GemmTuner::Fp8Choice &fc = c_fc_.fp8_choice(rows), &proj = c_proj_.fp8_choice(rows);
  std::ostringstream pair, apart, os;
  pair << std::fixed << std::setprecision(1);
  apart << std::fixed << std::setprecision(1);
  if (p.pair_ms >= 0.f)
    pair << "pair " << p.pair_ms * 1e3f << " us (c_fc e4m3 out " << fc.fp8_out8_ms * 1e3f
         << " + c_proj without its quantize " << proj.fp8_gemm_ms * 1e3f << ")";
  if (p.apart_ms >= 0.f)
    apart << "apart " << p.apart_ms * 1e3f << " us (c_fc " << (fc.fp8 ? "fp8 " : "bf16 ")
          << (fc.fp8 ? fc.fp8_ms : fc.bf16_ms) * 1e3f << " + c_proj " << (proj.fp8 ? "fp8 with its quantize " : "bf16 ")
          << (proj.fp8 ? proj.fp8_ms : proj.bf16_ms) * 1e3f << ")";
  // The choice first, then what it was weighed against.
  const std::string chosen = p.pair ? pair.str() : apart.str(), other = p.pair ? apart.str() : pair.str();
  os << (p.pair ? "the pair" : "apart");
  if (!chosen.empty()) os << ": " << chosen;
  if (!other.empty()) os << (chosen.empty() ? ": " : ", against ") << other;
  if (!p.why.empty()) os << " [" << p.why << "]";
  return os.str();
}

void MLP::begin_calibration(const Context& ctx) {
  c_fc_.begin_calibration(ctx);
  c_proj_.begin_calibration(ctx);
}

void MLP::end_calibration(const Context& ctx) {
  c_fc_.end_calibration(ctx);
  c_proj_.end_calibration(ctx);
}

void MLP::append_costs(std::vector<LayerCost>& out, const std::string& parent, int rows, Accumulate acc) const {
  const double N = rows, C = C_;
  out.push_back(composite_cost(name_.str(), parent));
  out.push_back(c_fc_.cost(c_fc_name_.str(), name_.str(), rows, Accumulate::Overwrite));
  // In c_fc's epilogue the GELU has no range, and its 4C-wide round trip through memory is gone.
  if (!c_fc_.gelu_fused())
    out.push_back(streaming_cost(gelu_name_.str(), name_.str(), "elementwise", N * 4 * C, N * 4 * C, 0,
                                 static_cast<double>(dtype_size(dtype_))));
  out.push_back(c_proj_.cost(c_proj_name_.str(), name_.str(), rows, acc));
}

void MLP::forward(const Context& ctx, void* y, const void* x, int rows, void* scratch, Accumulate acc) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  {
    NvtxRange r(ctx, NvtxLevel::Layer, c_fc_name_);
    c_fc_.forward(ctx, scratch, x, rows);
  }
  if (!c_fc_.gelu_fused()) {
    NvtxRange r(ctx, NvtxLevel::Layer, gelu_name_);
    gelu_forward(dtype_, scratch, scratch, static_cast<int64_t>(rows) * 4 * C_, ctx.stream());
  }
  NvtxRange r(ctx, NvtxLevel::Layer, c_proj_name_);
  c_proj_.forward(ctx, y, scratch, rows, acc);
}

}  // namespace laptime
