#include "layers/linear.h"

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <utility>

#include "core/check.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"

namespace laptime {

namespace {

// The fp8 scales of one layer, floats in one small device buffer (pointers into it go into
// cuBLASLt's descriptors and the producers' kernels, so they stay put).
enum ScaleSlot : int { kScaleW, kScaleX, kInvScaleX, kAmaxX, kInvScaleW, kAmaxW, kScaleSlots };

// LAPTIME_FP8_GEMM=auto|fp8|bf16: measured per shape (default), every GEMM cuBLASLt runs in fp8,
// or none (the fp8 build's bf16 baseline). Read once.
enum class Fp8Policy { Auto, Always, Never };
Fp8Policy fp8_policy() {
  static const Fp8Policy p = [] {
    const char* env = std::getenv("LAPTIME_FP8_GEMM");
    const std::string v = env ? env : "";
    if (v.empty() || v == "auto") return Fp8Policy::Auto;
    if (v == "fp8") return Fp8Policy::Always;
    if (v == "bf16") return Fp8Policy::Never;
    throw Error("LAPTIME_FP8_GEMM must be 'auto', 'fp8' or 'bf16', not '" + v + "'.");
  }();
  return p;
}

// LAPTIME_FP8_FAST_ACCUM=1: cuBLASLt's fast fp8 accumulation (layers/gemm.h). Read once.
bool fp8_fast_accum() {
  static const bool on = [] {
    const char* env = std::getenv("LAPTIME_FP8_FAST_ACCUM");
    return env && std::string(env) == "1";
  }();
  return on;
}

float read_float(const Context& ctx, const float* p) {
  float v = 0.f;
  CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return v;
}

void write_floats(const Context& ctx, float* dst, std::initializer_list<float> values) {
  const std::vector<float> v(values);
  CUDA_CHECK(cudaMemcpyAsync(dst, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice, ctx.stream()));
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
    return std::string("-p fp8 needs a build with sm_89 or newer code; this one was built for CMAKE_CUDA_ARCHITECTURES=") +
           LAPTIME_CUDA_ARCHITECTURES + " (rebuild with 90 for Hopper).";
  return "";
}

// One shape's plans: bf16 always; in fp8 the e4m3 one too, and the measured choice.
struct Linear::Plan {
  std::optional<Gemm> bf16, fp8;
  bool fp8_chosen = false;  // forward() runs `fp8` (once calibrated)
  bool quantize = false;    // forward() quantizes x itself (Fp8Input::Quantize)
  bool out_fp8 = false;     // the fp8 plan writes e4m3
  DeviceBuffer x8;          // [rows, in] e4m3 when quantize
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

void Linear::make_fp8_weight(const Context& ctx) {
  require(dtype_ == DType::BF16, "internal: fp8 linear '" + name_ + "' needs bf16 weights, not " +
                                     std::string(dtype_name(dtype_)) + ".");
  const int64_t n = int64_t{in_} * out_;
  scales_ = DeviceBuffer(kScaleSlots * sizeof(float));
  float* s = scales_.as<float>();
  CUDA_CHECK(cudaMemsetAsync(s, 0, scales_.bytes(), ctx.stream()));
  amax_forward(s + kAmaxW, dtype_, weight_, n, ctx.stream());
  const float s_w = scale_from_amax(read_float(ctx, s + kAmaxW), 1.f, "the weight of '" + name_ + "'");
  // Until calibration s_x = 1: the timing runs in prepare() need finite scales, nothing more.
  write_floats(ctx, s, {s_w, 1.f, 1.f, 0.f, 1.f / s_w});
  weight8_ = DeviceBuffer(static_cast<std::size_t>(n));
  quantize_fp8(weight8_.data(), s + kInvScaleW, dtype_, weight_, n, ctx.stream());
}

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
  if (precision_ != Precision::FP8) {
    plans_.emplace(rows, std::move(owned));
    return;
  }

  // fp8: build the e4m3 plan (an e4m3 D when the consumer reads fp8, else bf16), then choose.
  if (!weight8_.data()) make_fp8_weight(ctx);
  float* sc = scales_.as<float>();
  GemmSpec f = s;
  f.ab_dtype = DType::F8E4M3;
  f.a_scale = sc + kScaleX;
  f.b_scale = sc + kScaleW;
  f.fp8_fast_accum = fp8_fast_accum();
  p.quantize = fp8_input_ == Fp8Input::Quantize;
  std::string refused;
  for (const bool out8 : {out_inv_scale_ != nullptr, false}) {
    f.d_dtype = out8 ? DType::F8E4M3 : out_dtype_;
    f.d_scale = out8 ? out_inv_scale_ : nullptr;
    try {
      p.fp8.emplace(ctx.cublaslt(), f, ctx.workspace_bytes());
      p.out_fp8 = out8;
      break;
    } catch (const Error& e) {
      refused += std::string(refused.empty() ? "" : "; ") + (out8 ? "with an fp8 output: " : "") + e.what();
      if (!out8) break;
    }
  }
  std::ostringstream key;
  key << rows << ' ' << out_ << ' ' << in_ << ' ' << int(f.epilogue) << ' ' << ldy_ << ' ' << p.out_fp8 << ' '
      << p.quantize << ' ' << !p.fp8.has_value();
  const GemmTuner::Fp8Choice* cached = tuner ? tuner->fp8_choice(key.str()) : nullptr;
  GemmTuner::Fp8Choice c;
  if (cached) {
    c = *cached;
  } else if (!p.fp8) {
    c.note = "cuBLASLt has no fp8 plan: " + refused;
  } else {
    if (tuner) tuner->tune(ctx, *p.fp8, weight8_.data(), bias_);
    // Operands of the real shape with random values (zeros would run faster than data).
    const int64_t ld = ldy_ ? ldy_ : out_;
    DeviceBuffer x(static_cast<std::size_t>(rows) * in_ * dtype_size(dtype_)), x8(static_cast<std::size_t>(rows) * in_),
        y(static_cast<std::size_t>(rows) * ld * dtype_size(out_dtype_));
    fill_uniform(dtype_, x.data(), int64_t{rows} * in_, 1, ctx.stream());
    quantize_fp8(x8.data(), sc + kInvScaleX, dtype_, x.data(), int64_t{rows} * in_, ctx.stream());
    // core/timing's one way of timing a candidate (in a CUDA graph, the GPU's time alone).
    c.bf16_ms = time_candidate(ctx.stream(), [&] {
      p.bf16->run(ctx, y.data(), x.data(), weight_, bias_);
      return true;
    });
    c.fp8_ms = time_candidate(ctx.stream(), [&] {
      if (p.quantize) quantize_fp8(x8.data(), sc + kInvScaleX, dtype_, x.data(), int64_t{rows} * in_, ctx.stream());
      p.fp8->run(ctx, y.data(), x8.data(), weight8_.data(), bias_);
      return true;
    });
    const Fp8Policy policy = fp8_policy();
    if (c.fp8_ms < 0.f) c.note = "the fp8 plan failed to run";
    c.fp8 = c.fp8_ms >= 0.f && (policy == Fp8Policy::Always ||
                                (policy == Fp8Policy::Auto && (c.bf16_ms < 0.f || c.fp8_ms < c.bf16_ms)));
    if (policy == Fp8Policy::Never) c.note = "LAPTIME_FP8_GEMM=bf16";
    if (!refused.empty()) c.note = refused;  // the fp8 output that was refused, when it was
  }
  if (tuner && !cached) tuner->set_fp8_choice(key.str(), c);
  p.choice = c;
  p.fp8_chosen = c.fp8 && p.fp8.has_value();
  if (p.fp8_chosen && p.quantize) p.x8 = DeviceBuffer(static_cast<std::size_t>(rows) * in_);
  plans_.emplace(rows, std::move(owned));
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

void Linear::input_produced_in_fp8(int rows) {
  auto it = plans_.find(rows);
  require(it != plans_.end() && it->second->fp8_chosen, "internal: input_produced_in_fp8() on a bf16 plan.");
  it->second->quantize = false;
  it->second->x8 = DeviceBuffer();
}

bool Linear::runs_fp8(int rows) const { return precision_ == Precision::FP8 && plan(rows).fp8_chosen; }

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
  require(scales_.data() != nullptr, "internal: fp8 linear '" + name_ + "' has no scales before prepare().");
  return scales_.as<float>() + kInvScaleX;
}

void Linear::begin_calibration(const Context& ctx) {
  if (precision_ != Precision::FP8) return;
  require(scales_.data() != nullptr, "internal: calibration of fp8 linear '" + name_ + "' before prepare().");
  CUDA_CHECK(cudaMemsetAsync(scales_.as<float>() + kAmaxX, 0, sizeof(float), ctx.stream()));
  calibrating_ = true;
}

void Linear::end_calibration(const Context& ctx) {
  if (precision_ != Precision::FP8) return;
  require(calibrating_, "internal: end_calibration() without begin_calibration().");
  float* sc = scales_.as<float>();
  const float s_x = scale_from_amax(read_float(ctx, sc + kAmaxX), kActivationMargin, "the input of '" + name_ + "'");
  CUDA_CHECK(cudaMemcpyAsync(sc + kScaleX, &s_x, sizeof s_x, cudaMemcpyHostToDevice, ctx.stream()));
  const float inv = 1.f / s_x;
  CUDA_CHECK(cudaMemcpyAsync(sc + kInvScaleX, &inv, sizeof inv, cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  calibrating_ = false;
  calibrated_ = true;
}

std::pair<float, float> Linear::fp8_scales(const Context& ctx) const {
  if (!scales_.data()) return {1.f, 1.f};
  return {read_float(ctx, scales_.as<float>() + kScaleW), read_float(ctx, scales_.as<float>() + kScaleX)};
}

std::string Linear::fp8_report(int rows) const {
  const Plan& p = plan(rows);
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  const GemmTuner::Fp8Choice& c = p.choice;
  os << (p.fp8_chosen ? "fp8" : "bf16");
  if (p.fp8_chosen && p.out_fp8) os << " (fp8 out)";
  if (p.fp8_chosen && p.quantize) os << " (quantizes its input)";
  if (c.fp8_ms >= 0.f) os << ", fp8 " << c.fp8_ms * 1e3f << " us, bf16 " << c.bf16_ms * 1e3f << " us";
  if (!c.note.empty()) os << " [" << c.note.substr(0, c.note.find('\n')) << "]";
  return os.str();
}

void Linear::forward(const Context& ctx, void* y, const void* x, int rows, Accumulate acc) const {
  const Plan& p = plan(rows);
  if (gelu_ && acc == Accumulate::Add) throw Error("internal: the GELU epilogue cannot accumulate into y.");
  const float beta = acc == Accumulate::Add ? 1.f : 0.f;
  if (p.fp8_chosen && !calibrating_) {
    if (!calibrated_)
      throw Error("internal: fp8 linear '" + name_ + "' runs before its calibration (calibrate the model first).");
    if (p.out_fp8 && acc == Accumulate::Add) throw Error("internal: an fp8 output cannot accumulate a residual.");
    const void* x8 = x;
    if (p.quantize) {
      quantize_fp8(p.x8.data(), scales_.as<float>() + kInvScaleX, dtype_, x, int64_t{rows} * in_, ctx.stream());
      x8 = p.x8.data();
    }
    p.fp8->run(ctx, y, x8, weight8_.data(), bias_, 1.f, beta);
    return;
  }
  if (calibrating_) amax_forward(scales_.as<float>() + kAmaxX, dtype_, x, int64_t{rows} * in_, ctx.stream());
  p.bf16->run(ctx, y, x, weight_, bias_, 1.f, beta);
}

}  // namespace laptime
