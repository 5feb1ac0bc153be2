#include "layers/linear.h"

#include <functional>
#include <iomanip>
#include <sstream>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"

namespace laptime {

// One shape's plans: bf16 always; in fp8 the e4m3 one too (and one writing e4m3 where the
// consumer offered its scale), and the measured choice.
struct Linear::Plan {
  std::optional<Gemm> bf16, fp8, fp8_out8;  // fp8: the storage type's output; fp8_out8: e4m3
  bool fp8_chosen = false;                  // forward() runs an fp8 plan (once calibrated)
  bool quantize = false;                    // forward() quantizes x itself (Fp8Input::Quantize)
  bool out_fp8 = false;                     // forward() runs fp8_out8 (write_fp8_output)
  DeviceBuffer x8;                          // [rows, in] e4m3 when quantize
  GemmTuner::Fp8Choice choice;
};

Linear::Linear(const DeviceWeights& w, const std::string& prefix, int in, int out, Precision precision, HasBias bias)
    : Linear(w, prefix + ".weight", bias == HasBias::Yes ? prefix + ".bias" : std::string(), in, out, precision) {
  name_ = prefix;
}

Linear::Linear(const DeviceWeights& w, const std::string& weight_name, const std::string& bias_name, int in, int out,
               Precision precision, int64_t ldy)
    : Linear(w.get(weight_name), bias_name.empty() ? nullptr : w.get(bias_name), w.dtype(), in, out, precision, ldy) {}

Linear::Linear(const void* weight, const void* bias, DType dtype, int in, int out, Precision precision, int64_t ldy,
               std::optional<DType> out_dtype)
    : weight_(weight),
      bias_(bias),
      in_(in),
      out_(out),
      ldy_(ldy),
      precision_(precision),
      dtype_(dtype),
      out_dtype_(out_dtype.value_or(dtype)) {}

Linear::~Linear() = default;
Linear::Linear(Linear&&) noexcept = default;

void Linear::fuse_gelu() {
  require(bias_ != nullptr, "internal: the GELU epilogue needs a bias.");
  require(plans_.empty(), "internal: fuse_gelu() after prepare().");
  gelu_ = true;
}

void Linear::set_fp8_input(Fp8Input who) {
  require(plans_.empty(), "internal: set_fp8_input() after prepare().");
  fp8_input_ = who;
}

void Linear::set_fp8_output(const float* inv_scale) { out_inv_scale_ = inv_scale; }

void Linear::prepare(const Context& ctx, int rows, GemmTuner* tuner) {
  if (plans_.count(rows)) return;
  GemmSpec s;
  s.M = rows;
  s.N = out_;
  s.K = in_;
  s.b_layout = BLayout::NK;
  s.ab_dtype = dtype_;
  s.d_dtype = out_dtype_;
  s.precision = precision_;
  s.epilogue = gelu_ ? Epilogue::GeluBias : bias_ ? Epilogue::Bias : Epilogue::None;
  s.ldd = ldy_;
  auto owned = std::make_unique<Plan>();
  Plan& p = *owned;
  p.bf16.emplace(ctx.cublaslt(), s, ctx.workspace_bytes());
  if (tuner) tuner->tune(ctx, *p.bf16, weight_, bias_);
  if (precision_ == Precision::FP8) prepare_fp8(ctx, rows, s, p, tuner);
  plans_.emplace(rows, std::move(owned));
}

// fp8: build the e4m3 plan (and, where the consumer offered its scale, one writing e4m3), then
// choose by timing on the real shape, the quantize pass included where the layer makes x8
// itself. Every refusal on the way lands in the choice's note, the library's words included, so
// that the bench's plan line (and a failing test) says why a layer stayed bf16.
void Linear::prepare_fp8(const Context& ctx, int rows, const GemmSpec& s, Plan& p, GemmTuner* tuner) {
  if (!fp8_.made()) fp8_.make(ctx, weight_, dtype_, int64_t{in_} * out_, name_);
  GemmSpec f = s;
  f.ab_dtype = DType::F8E4M3;
  f.a_scale = fp8_.input_scale();
  f.b_scale = fp8_.weight_scale();
  f.fp8_fast_accum = env::fp8_fast_accum();
  p.quantize = fp8_input_ == Fp8Input::Quantize;
  std::string refused;
  try {
    p.fp8.emplace(ctx.cublaslt(), f, ctx.workspace_bytes());
  } catch (const Error& e) {
    refused = e.what();
  }
  if (p.fp8 && out_inv_scale_) {
    GemmSpec f8 = f;
    f8.d_dtype = DType::F8E4M3;
    f8.d_scale = out_inv_scale_;
    try {
      p.fp8_out8.emplace(ctx.cublaslt(), f8, ctx.workspace_bytes());
    } catch (const Error& e) {
      refused = std::string("an fp8 output refused: ") + e.what();
    }
  }
  // GemmChoice::Timed: every layer's fp8 plans take the timed algorithm (the tuner's own cache
  // makes the identical layers' calls cheap), whether or not the choice below is cached.
  if (tuner && p.fp8) tuner->tune(ctx, *p.fp8, fp8_.weight8(), bias_);
  if (tuner && p.fp8_out8) tuner->tune(ctx, *p.fp8_out8, fp8_.weight8(), bias_);
  std::ostringstream key;
  key << rows << ' ' << out_ << ' ' << in_ << ' ' << int(f.epilogue) << ' ' << ldy_ << ' '
      << (out_inv_scale_ != nullptr) << ' ' << p.quantize << ' ' << p.fp8.has_value() << ' ' << p.fp8_out8.has_value();
  const GemmTuner::Fp8Choice* cached = tuner ? tuner->fp8_choice(key.str()) : nullptr;
  GemmTuner::Fp8Choice c;
  if (cached) {
    c = *cached;
  } else if (!p.fp8) {
    c.note = "cuBLASLt has no fp8 plan: " + refused;
  } else {
    c = time_fp8_choice(ctx, rows, p, tuner);
    if (!refused.empty()) c.note = refused + (c.note.empty() ? "" : "; " + c.note);
  }
  if (tuner && !cached) tuner->set_fp8_choice(key.str(), c);
  p.choice = c;
  p.fp8_chosen = c.fp8 && p.fp8.has_value();
  if (p.fp8_chosen && p.quantize) p.x8 = DeviceBuffer(static_cast<std::size_t>(rows) * in_);
}

GemmTuner::Fp8Choice Linear::time_fp8_choice(const Context& ctx, int rows, const Plan& p,
                                             const GemmTuner* tuner) const {
  // Operands of the real shape with random values (zeros would run faster than data).
  const int64_t ld = ldy_ ? ldy_ : out_, n = int64_t{rows} * in_;
  DeviceBuffer x(static_cast<std::size_t>(n) * dtype_size(dtype_)), x8(static_cast<std::size_t>(n)),
      y(static_cast<std::size_t>(rows) * ld * dtype_size(out_dtype_));  // also holds an e4m3 y
  fill_uniform(dtype_, x.data(), n, 1, ctx.stream());
  quantize_fp8(x8.data(), fp8_.input_inv_scale(), dtype_, x.data(), n, ctx.stream());
  GemmTuner::Fp8Choice c;
  std::string bf16_why, fp8_why, out8_why, gemm_why;
  // core/timing's one way of timing a candidate (in a CUDA graph, the GPU's time alone), and
  // with a tuner that expects an eager loop its host cost too (GemmTuner::charge: the quantize
  // pass is one more launch). `gemm` with `quantize`: the fp8 candidate as forward() runs it.
  auto timed = [&](const std::function<bool()>& run, std::string* why) {
    return tuner ? tuner->charge(ctx, run, why) : time_candidate(ctx.stream(), run, why);
  };
  auto fp8_run = [&](const Gemm& gemm, bool quantize, std::string* why) {
    return timed(
        [&] {
          if (quantize) quantize_fp8(x8.data(), fp8_.input_inv_scale(), dtype_, x.data(), n, ctx.stream());
          gemm.run(ctx, y.data(), x8.data(), fp8_.weight8(), bias_);
          return true;
        },
        why);
  };
  c.bf16_ms = timed(
      [&] {
        p.bf16->run(ctx, y.data(), x.data(), weight_, bias_);
        return true;
      },
      &bf16_why);
  c.fp8_ms = fp8_run(*p.fp8, p.quantize, &fp8_why);
  // What a pair's owner compares (layers/gpt2/mlp.h): this layer writing e4m3, or reading it.
  if (p.fp8_out8) c.fp8_out8_ms = fp8_run(*p.fp8_out8, p.quantize, &out8_why);
  if (p.quantize) c.fp8_gemm_ms = fp8_run(*p.fp8, false, &gemm_why);
  const Fp8Policy policy = env::fp8_gemm();
  std::vector<std::string> notes;
  if (c.fp8_ms < 0.f) notes.push_back("the fp8 plan failed to run: " + fp8_why);
  if (c.bf16_ms < 0.f) notes.push_back("the bf16 plan failed to run: " + bf16_why);
  if (p.fp8_out8 && c.fp8_out8_ms < 0.f) notes.push_back("the fp8 plan with an e4m3 output failed to run: " + out8_why);
  if (p.quantize && c.fp8_gemm_ms < 0.f)
    notes.push_back("the fp8 GEMM without its quantize failed to run: " + gemm_why);
  if (policy == Fp8Policy::Never) notes.push_back("LAPTIME_FP8_GEMM=bf16");
  if (tuner && tuner->replay() == GemmTuner::Replay::Eager) notes.push_back(GemmTuner::eager_note(tuner->replay()));
  for (const std::string& n8 : notes) c.note += (c.note.empty() ? "" : "; ") + n8;
  c.fp8 = c.fp8_ms >= 0.f &&
          (policy == Fp8Policy::Always || (policy == Fp8Policy::Auto && (c.bf16_ms < 0.f || c.fp8_ms < c.bf16_ms)));
  return c;
}

// fp8: an e4m3 plan reads 1-byte weights, a 1-byte input when its producer writes e4m3 (else
// the bf16 input it quantizes), and writes 1-byte elements when its consumer reads e4m3; it
// computes in "fp8". In an fp8 run a layer that stays bf16 says "bf16", so that the roofline
// bounds it by bf16's ceiling and not by the run's.
LayerCost Linear::cost(const std::string& name, const std::string& parent, int rows, Accumulate acc) const {
  if (!plans_.count(rows))
    throw Error("internal: the costs of '" + name + "' were asked for " + std::to_string(rows) +
                " rows, which it was not prepared for.");
  const double es = static_cast<double>(dtype_size(dtype_)), os = static_cast<double>(dtype_size(out_dtype_));
  LayerCost c = gemm_cost(name, parent, rows, in_, out_, es, os, bias_ != nullptr, acc == Accumulate::Add);
  if (dtype_ == DType::F16) c.precision = "fp16";
  if (precision_ == Precision::FP8) {
    const Plan& p = plan(rows);
    c.precision = p.fp8_chosen ? "fp8" : "bf16";
    if (p.fp8_chosen) {
      const double N = rows;
      c.weight_bytes = double(in_) * out_ + (bias_ ? out_ * os : 0);
      c.input_bytes = N * in_ * (p.quantize ? es : 1) + (acc == Accumulate::Add ? N * out_ * os : 0);
      c.output_bytes = N * out_ * (p.out_fp8 ? 1 : os);
    }
  }
  return c;
}

const Linear::Plan& Linear::plan(int rows) const {
  const auto it = plans_.find(rows);
  if (it == plans_.end())
    throw Error("internal: a linear layer [" + std::to_string(in_) + " -> " + std::to_string(out_) +
                "] was not prepared for " + std::to_string(rows) + " rows (prepare() comes first).");
  return *it->second;
}

bool Linear::can_write_fp8_output(int rows) const {
  const Plan& p = plan(rows);
  return p.fp8_out8.has_value() && p.choice.fp8_out8_ms >= 0.f;
}

void Linear::write_fp8_output(int rows) {
  require(can_write_fp8_output(rows),
          "internal: write_fp8_output() on '" + name_ + "', which has no e4m3-output plan.");
  Plan& p = *plans_.at(rows);
  p.fp8_chosen = true;
  p.out_fp8 = true;
  if (p.quantize && p.x8.bytes() == 0) p.x8 = DeviceBuffer(static_cast<std::size_t>(rows) * in_);
}

bool Linear::can_read_fp8_input(int rows) const {
  const Plan& p = plan(rows);
  return p.fp8.has_value() && p.quantize && p.choice.fp8_gemm_ms >= 0.f;
}

void Linear::input_produced_in_fp8(int rows) {
  auto it = plans_.find(rows);
  require(it != plans_.end() && it->second->fp8.has_value() && it->second->quantize,
          "internal: input_produced_in_fp8() on '" + name_ + "', which has no fp8 plan that quantizes.");
  it->second->fp8_chosen = true;
  it->second->quantize = false;
  it->second->x8 = DeviceBuffer();
}

const GemmTuner::Fp8Choice& Linear::fp8_choice(int rows) const { return plan(rows).choice; }

bool Linear::runs_fp8(int rows) const { return precision_ == Precision::FP8 && plan(rows).fp8_chosen; }

std::string Linear::backend(int rows) const {
  const Plan& p = plan(rows);
  if (!runs_fp8(rows)) return p.bf16->backend();
  return (p.out_fp8 ? *p.fp8_out8 : *p.fp8).backend();
}

DType Linear::input_dtype(int rows) const {
  if (precision_ != Precision::FP8 || calibrating_) return dtype_;
  const Plan& p = plan(rows);
  return p.fp8_chosen && !p.quantize ? DType::F8E4M3 : dtype_;
}

DType Linear::output_dtype(int rows) const {
  if (precision_ != Precision::FP8 || calibrating_) return out_dtype_;
  const Plan& p = plan(rows);
  return p.fp8_chosen && p.out_fp8 ? DType::F8E4M3 : out_dtype_;
}

const float* Linear::input_inv_scale() const {
  require(fp8_.made(), "internal: fp8 linear '" + name_ + "' has no scales before prepare().");
  return fp8_.input_inv_scale();
}

void Linear::begin_calibration(const Context& ctx) {
  if (precision_ != Precision::FP8) return;
  fp8_.begin_calibration(ctx);
  calibrating_ = true;
}

void Linear::end_calibration(const Context& ctx) {
  if (precision_ != Precision::FP8) return;
  require(calibrating_, "internal: end_calibration() without begin_calibration().");
  fp8_.end_calibration(ctx, kActivationMargin);
  calibrating_ = false;
}

std::pair<float, float> Linear::fp8_scales(const Context& ctx) const { return fp8_.scales(ctx); }

std::string Linear::fp8_report(int rows) const {
  const Plan& p = plan(rows);
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  const GemmTuner::Fp8Choice& c = p.choice;
  os << (p.fp8_chosen ? "fp8" : "bf16");
  if (const std::string b = backend(rows); b != "cuBLASLt") os << " (" << b << ")";
  if (p.fp8_chosen && p.out_fp8) os << " (e4m3 out)";
  if (p.fp8_chosen && p.quantize) os << " (quantizes its input)";
  if (p.fp8_chosen && !p.quantize && fp8_input_ == Fp8Input::Quantize) os << " (its producer writes e4m3)";
  if (c.fp8_ms >= 0.f) os << ", fp8 " << c.fp8_ms * 1e3f << " us, bf16 " << c.bf16_ms * 1e3f << " us";
  if (c.fp8_out8_ms >= 0.f) os << ", e4m3 out " << c.fp8_out8_ms * 1e3f << " us";
  if (c.fp8_gemm_ms >= 0.f) os << ", fp8 without its quantize " << c.fp8_gemm_ms * 1e3f << " us";
  if (!c.note.empty()) os << " [" << c.note.substr(0, c.note.find('\n')) << "]";
  return os.str();
}

void Linear::forward(const Context& ctx, void* y, const void* x, int rows, Accumulate acc) const {
  const Plan& p = plan(rows);
  if (gelu_ && acc == Accumulate::Add) throw Error("internal: the GELU epilogue cannot accumulate into y.");
  const float beta = acc == Accumulate::Add ? 1.f : 0.f;
  if (p.fp8_chosen && !calibrating_) {
    if (!fp8_.calibrated())
      throw Error("internal: fp8 linear '" + name_ + "' runs before its calibration (calibrate the model first).");
    if (p.out_fp8 && acc == Accumulate::Add) throw Error("internal: an fp8 output cannot accumulate a residual.");
    const void* x8 = x;
    if (p.quantize) {
      quantize_fp8(p.x8.data(), fp8_.input_inv_scale(), dtype_, x, int64_t{rows} * in_, ctx.stream());
      x8 = p.x8.data();
    }
    (p.out_fp8 ? *p.fp8_out8 : *p.fp8).run(ctx, y, x8, fp8_.weight8(), bias_, 1.f, beta);
    return;
  }
  if (calibrating_) fp8_.record_input(ctx, x, dtype_, int64_t{rows} * in_);
  p.bf16->run(ctx, y, x, weight_, bias_, 1.f, beta);
}

}  // namespace laptime
