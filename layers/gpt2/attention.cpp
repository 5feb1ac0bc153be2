#include "layers/gpt2/attention.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/check.h"
#include "kernels/attention.cuh"
#include "kernels/flash_attention.cuh"
#include "kernels/flash_attention_f32.cuh"
#include "kernels/lab/launch.cuh"
#include "layers/gpt2/sdpa_cudnn.h"

namespace laptime {

struct CausalSelfAttention::Plan {
  AttentionKind kind = AttentionKind::Naive;
  int lab = -1;                    // laptime lab's core version (v1, v2) instead of kind's
  bool f16 = false;                // cuDNN core in fp16 around fp32 storage (tf32)
  CudnnSdpa sdpa;                  // kind == Cudnn
  std::optional<Gemm> scores, pv;  // kind == Naive
};

struct CausalSelfAttention::Slots {
  std::size_t qkv, q, k, v, scores, probs, heads, x16, qkv16, heads16, total;
};

namespace {
// tf32 may run cuDNN's core in fp16: q, k, v rounded to fp16's 10-bit mantissa, the
// precision TF32 tensor cores round their inputs to; fp16's narrower range (±65504) is the
// difference. Strict fp32 may not.
bool f16_core(Precision precision, DType dtype) { return precision == Precision::TF32 && dtype == DType::F32; }

// Our fused kernels: bf16 storage with head size 64 (kernels/flash_attention.cu), fp32
// storage (fp32, tf32) with head size 16, 32 or 64 (kernels/flash_attention_f32.cu).
bool flash_supported(DType dtype, int hd) {
  return dtype == DType::F32 ? flash_attention_f32_supported(hd) : flash_attention_supported(dtype, hd);
}

// True where the wgmma core runs here (a build for sm_90, an sm_90 GPU, bf16, head size 64); it is
// then ready to launch (flash_attention_wgmma_prepare).
bool wgmma_runs(DType dtype, int hd) { return flash_attention_wgmma_prepare(dtype, hd).empty(); }

// Auto's first choice, per precision: the fastest measured (docs/history/gpt2-notes.md; the laps
// in docs/history/baselines.md, run 2; the wgmma core: "A Hopper attention core: measured").
//   bf16       our wgmma core where it runs (sm_90), measured faster than cuDNN's at B8 and B1;
//              elsewhere cuDNN, measured (prepare() falls back to flash, then naive, where cuDNN
//              refuses the shape)
//   tf32       cuDNN in fp16 with fp16 projections around it (layers/gpt2/attention.h), measured
//              faster than naive and than our fp32 flash kernel in tf32; falls back like bf16
//   fp32       our fp32 flash kernel where it has the head size, else naive: no T x T traffic,
//              the causal half skipped (kernels/flash_attention_f32.cu), measured faster than naive
//   fp8        as bf16 (the core stays bf16: layers/gpt2/attention.h)
AttentionKind auto_kind(Precision precision, DType dtype, int hd) {
  const bool sixteen_bit = precision == Precision::BF16 || precision == Precision::FP8;
  if (sixteen_bit && wgmma_runs(dtype, hd)) return AttentionKind::Wgmma;
  if (sixteen_bit || f16_core(precision, dtype)) return AttentionKind::Cudnn;
  return flash_supported(dtype, hd) ? AttentionKind::Flash : AttentionKind::Naive;
}

// --kernel attention=vN: v3 is our flash kernel, v4 cuDNN's, v5 the wgmma one, as --attention
// would choose them; v1 and v2 (lab_core_of) run from kernels/lab/ in the core's place.
AttentionKind kind_of(const lab::KernelChoice& kernels, AttentionKind kind) {
  const auto it = kernels.find("attention");
  if (it == kernels.end()) return kind;
  require(kind == AttentionKind::Auto, "--kernel attention and --attention both choose the attention core; give one.");
  switch (it->second) {
    case 2:
      return AttentionKind::Flash;
    case 3:
      return AttentionKind::Cudnn;
    case 4:
      return AttentionKind::Wgmma;
    default:
      return AttentionKind::Auto;
  }
}

int lab_core_of(const lab::KernelChoice& kernels) {
  const auto it = kernels.find("attention");
  const bool in_core_place = it != kernels.end() && (it->second < 2 || lab::user_version_info("attention", it->second));
  return in_core_place ? it->second : -1;  // v1, v2 or a learner's file (--kernel attention=FILE.cu)
}

void check_kind(AttentionKind kind, Precision precision, DType dtype, int hd) {
  if (kind == AttentionKind::Cudnn)
    require(dtype == DType::BF16 || f16_core(precision, dtype),
            std::string("--attention cudnn runs in bf16 and tf32 (cuDNN's fused attention takes 16-bit data), not ") +
                precision_name(precision) + "; use --attention naive.");
  if (kind == AttentionKind::Flash)
    require(flash_supported(dtype, hd),
            std::string("--attention flash runs in bf16 with head size 64 and in fp32 or tf32 with head size 16, "
                        "32 or 64, not ") +
                precision_name(precision) + " with head size " + std::to_string(hd) + "; use --attention naive.");
  if (kind == AttentionKind::Wgmma) {
    const std::string why = flash_attention_wgmma_prepare(dtype, hd);
    require(why.empty(), "--attention wgmma cannot run here: " + why + " Use --attention flash or cudnn (or auto).");
  }
}
}  // namespace

bool CausalSelfAttention::uses_f16_core(int B, int T) const { return plan(B, T).f16; }

CausalSelfAttention::CausalSelfAttention(const DeviceWeights& w, const std::string& prefix, int C, int n_head,
                                         Precision precision, AttentionKind kind, const lab::KernelChoice& kernels)
    : name_(prefix),
      c_attn_name_(prefix + ".c_attn"),
      core_name_(prefix + ".core"),
      c_proj_name_(prefix + ".c_proj"),
      C_(C),
      H_(n_head),
      hd_(C / std::max(n_head, 1)),
      precision_(precision),
      dtype_(w.dtype()),
      requested_(kind_of(kernels, kind)),
      lab_core_(lab_core_of(kernels)),
      c_attn_(w, prefix + ".c_attn", C, 3 * C, precision, HasBias::Yes),
      c_proj_(w, prefix + ".c_proj", C, C, precision, HasBias::Yes),
      w_attn_(w.get(prefix + ".c_attn.weight")),
      b_attn_(w.get(prefix + ".c_attn.bias")),
      w_proj_(w.get(prefix + ".c_proj.weight")),
      b_proj_(w.get(prefix + ".c_proj.bias")) {
  require(n_head > 0 && C % n_head == 0,
          "n_embd (" + std::to_string(C) + ") is not divisible by n_head (" + std::to_string(n_head) + ").");
  check_kind(requested_, precision, dtype_, hd_);
  if (lab_core_ >= 0) {
    const std::string why = lab::attention_refusal(lab_core_, dtype_, hd_);
    require(why.empty(),
            "--kernel attention=v" + std::to_string(lab_core_ + 1) + " cannot run '" + prefix + "': " + why);
  }
  c_proj_.set_fp8_input(Fp8Input::Quantize);  // the heads come from the core in bf16
}

void CausalSelfAttention::begin_calibration(const Context& ctx) {
  c_attn_.begin_calibration(ctx);
  c_proj_.begin_calibration(ctx);
}

void CausalSelfAttention::end_calibration(const Context& ctx) {
  c_attn_.end_calibration(ctx);
  c_proj_.end_calibration(ctx);
}

CausalSelfAttention::~CausalSelfAttention() = default;
CausalSelfAttention::CausalSelfAttention(CausalSelfAttention&&) noexcept = default;

CausalSelfAttention::Slots CausalSelfAttention::slots(int B, int T, bool materialised, bool f16) const {
  const std::size_t bt = static_cast<std::size_t>(B) * T, es = dtype_size(dtype_);
  // The fused cores (cuDNN, flash) need only the QKV projection and the merged heads.
  const std::size_t tt = materialised ? static_cast<std::size_t>(B) * H_ * T * T : 0;
  const std::size_t head = materialised ? bt * C_ * es : 0;
  ArenaLayout l;
  Slots s{};
  s.qkv = l.reserve(bt * 3 * C_ * es);
  s.q = l.reserve(head);
  s.k = l.reserve(head);
  s.v = l.reserve(head);
  s.scores = l.reserve(tt * sizeof(float));
  s.probs = l.reserve(tt * es);
  s.heads = l.reserve(bt * C_ * es);
  s.x16 = l.reserve(f16 ? bt * C_ * 2 : 0);  // only when x arrives in fp32 (tests)
  s.qkv16 = l.reserve(f16 ? bt * 3 * C_ * 2 : 0);
  s.heads16 = l.reserve(f16 ? bt * C_ * 2 : 0);
  s.total = l.bytes();
  return s;
}

std::size_t CausalSelfAttention::scratch_bytes(int B, int T) const {
  // Auto ends at the naive core only where flash cannot run either (both of auto_kind's
  // chains, cuDNN -> flash -> naive and flash -> naive, do).
  const bool may_materialise = lab_core_ < 0 ? requested_ == AttentionKind::Naive ||
                                                   (requested_ == AttentionKind::Auto && !flash_supported(dtype_, hd_))
                                             : lab_core_ == 0;  // lab v1 keeps its scores where naive's go
  const bool may_f16 =
      lab_core_ < 0 && f16_core(precision_, dtype_) &&
      (requested_ == AttentionKind::Cudnn ||
       (requested_ == AttentionKind::Auto && auto_kind(precision_, dtype_, hd_) == AttentionKind::Cudnn));
  return slots(B, T, may_materialise, may_f16).total;
}

void CausalSelfAttention::prepare(Context& ctx, int B, int T, GemmTuner* tuner) {
  const auto key = std::make_pair(B, T);
  if (plans_.count(key)) return;
  auto p = std::make_unique<Plan>();
  AttentionKind kind = requested_;
  if (lab_core_ >= 0) {  // the projections in the storage type around laptime lab's core, no core plan
    p->lab = lab_core_;
    c_attn_.prepare(ctx, B * T, tuner);
    c_proj_.prepare(ctx, B * T, tuner);
    plans_.emplace(key, std::move(p));
    return;
  }
  if (kind == AttentionKind::Auto) kind = auto_kind(precision_, dtype_, hd_);
  if (kind == AttentionKind::Cudnn) {
    std::string why;
    p->f16 = f16_core(precision_, dtype_);
    if (!p->sdpa.build(ctx, B, T, H_, hd_, p->f16 ? DType::F16 : dtype_, &why)) {
      if (requested_ == AttentionKind::Cudnn)
        throw Error("cuDNN cannot run attention '" + name_.str() + "' for B=" + std::to_string(B) +
                    " T=" + std::to_string(T) + " H=" + std::to_string(H_) + " hd=" + std::to_string(hd_) + ": " +
                    why.substr(0, why.find('\n')));
      kind = flash_supported(dtype_, hd_) ? AttentionKind::Flash : AttentionKind::Naive;
      p->f16 = false;
    }
  }
  p->kind = kind;
  if (p->f16) {
    if (!c_attn16_) {
      // fp16 copies of the projections' weights: W_attn [3C, C], b_attn [3C] (the fp16
      // output's bias), W_proj [C, C]; c_proj's bias stays fp32 like its output.
      const int64_t n_wa = int64_t(3) * C_ * C_, n_ba = int64_t(3) * C_, n_wp = int64_t(C_) * C_;
      ArenaLayout l;
      const std::size_t o_wa = l.reserve(n_wa * 2), o_ba = l.reserve(n_ba * 2), o_wp = l.reserve(n_wp * 2);
      weights16_ = DeviceBuffer(l.bytes());
      char* base = weights16_.as<char>();
      convert_f32_to_f16(base + o_wa, static_cast<const float*>(w_attn_), n_wa, ctx.stream());
      convert_f32_to_f16(base + o_ba, static_cast<const float*>(b_attn_), n_ba, ctx.stream());
      convert_f32_to_f16(base + o_wp, static_cast<const float*>(w_proj_), n_wp, ctx.stream());
      c_attn16_.emplace(base + o_wa, base + o_ba, DType::F16, C_, 3 * C_, precision_);
      c_proj16_.emplace(base + o_wp, b_proj_, DType::F16, C_, C_, precision_, 0, DType::F32);
    }
    c_attn16_->prepare(ctx, B * T, tuner);
    c_proj16_->prepare(ctx, B * T, tuner);
  } else {  // the projections in the storage type; the fp16 path never runs these
    c_attn_.prepare(ctx, B * T, tuner);
    c_proj_.prepare(ctx, B * T, tuner);
  }
  if (kind == AttentionKind::Naive) {
    const int64_t head_stride = static_cast<int64_t>(T) * hd_, tt = static_cast<int64_t>(T) * T;
    // S[T, T] = q[T, hd] · k[T, hd]ᵀ, per head; fp32 output so the softmax sees unrounded scores.
    GemmSpec s;
    s.M = T;
    s.N = T;
    s.K = hd_;
    s.b_layout = BLayout::NK;
    s.ab_dtype = dtype_;
    s.d_dtype = DType::F32;
    s.precision = precision_;
    s.batch = B * H_;
    s.stride_a = head_stride;
    s.stride_b = head_stride;
    s.stride_d = tt;
    p->scores.emplace(ctx.cublaslt(), s, ctx.workspace_bytes());
    // O[T, hd] = P[T, T] · v[T, hd], per head.
    GemmSpec pv;
    pv.M = T;
    pv.N = hd_;
    pv.K = T;
    pv.b_layout = BLayout::KN;
    pv.ab_dtype = pv.d_dtype = dtype_;
    pv.precision = precision_;
    pv.batch = B * H_;
    pv.stride_a = tt;
    pv.stride_b = head_stride;
    pv.stride_d = head_stride;
    p->pv.emplace(ctx.cublaslt(), pv, ctx.workspace_bytes());
  }
  plans_.emplace(key, std::move(p));
}

const CausalSelfAttention::Plan& CausalSelfAttention::plan(int B, int T) const {
  const auto it = plans_.find({B, T});
  if (it == plans_.end())
    throw Error("internal: attention '" + name_.str() + "' was not prepared for B=" + std::to_string(B) +
                " T=" + std::to_string(T) + " (prepare() comes first).");
  return *it->second;
}

AttentionKind CausalSelfAttention::kind(int B, int T) const { return plan(B, T).kind; }

DType CausalSelfAttention::input_dtype(int B, int T) const {
  return plan(B, T).f16 ? DType::F16 : c_attn_.input_dtype(B * T);
}

void CausalSelfAttention::append_costs(std::vector<LayerCost>& out, const std::string& parent, int B, int T,
                                       Accumulate acc) const {
  const Plan& p = plan(B, T);
  const Linear& qkv = p.f16 ? *c_attn16_ : c_attn_;
  const Linear& proj = p.f16 ? *c_proj16_ : c_proj_;
  const double N = double(B) * T, C = C_, ea = p.f16 ? 2.0 : static_cast<double>(dtype_size(dtype_));
  out.push_back(composite_cost(name_.str(), parent));
  out.push_back(qkv.cost(c_attn_name_.str(), name_.str(), B * T, Accumulate::Overwrite));
  LayerCost core = streaming_cost(core_name_.str(), name_.str(), "attention", N * 3 * C, N * C, 0, ea);
  core.flops = 2 * (2 * double(B) * T * T * C);  // Q·Kᵀ and P·V over the full T×T square
  if (p.f16) core.precision = "fp16";
  if (precision_ == Precision::FP8) core.precision = "bf16";  // fp8 keeps a bf16 core (attention.h)
  out.push_back(core);
  out.push_back(proj.cost(c_proj_name_.str(), name_.str(), B * T, acc));
}

void CausalSelfAttention::forward(const Context& ctx, void* y, const void* x, int B, int T, void* scratch,
                                  Accumulate acc, std::optional<DType> x_dtype) const {
  const Plan& p = plan(B, T);
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  const Slots s = slots(B, T, p.lab < 0 ? p.kind == AttentionKind::Naive : p.lab == 0, p.f16);
  auto at = [scratch](std::size_t off) { return static_cast<char*>(scratch) + off; };
  const cudaStream_t st = ctx.stream();
  const DType xt = x_dtype.value_or(dtype_);
  if (xt != dtype_ && xt != input_dtype(B, T))  // the sentence is built only when it is needed
    throw Error(std::string("internal: attention '") + name_.str() + "' reads " + dtype_name(dtype_) + " or " +
                dtype_name(input_dtype(B, T)) + ", not " + dtype_name(xt) + ".");
  if (p.f16) {  // tf32 with cuDNN's fp16 core: fp16 from x to the heads
    {
      NvtxRange r(ctx, NvtxLevel::Layer, c_attn_name_);
      const void* x16 = x;
      if (xt != DType::F16) {
        convert_f32_to_f16(at(s.x16), static_cast<const float*>(x), static_cast<int64_t>(B) * T * C_, st);
        x16 = at(s.x16);
      }
      c_attn16_->forward(ctx, at(s.qkv16), x16, B * T);
    }
    {
      NvtxRange r(ctx, NvtxLevel::Layer, core_name_);
      p.sdpa.run(ctx, at(s.heads16), at(s.qkv16));
    }
    NvtxRange r(ctx, NvtxLevel::Layer, c_proj_name_);
    c_proj16_->forward(ctx, y, at(s.heads16), B * T, acc);
    return;
  }
  {
    NvtxRange r(ctx, NvtxLevel::Layer, c_attn_name_);
    c_attn_.forward(ctx, at(s.qkv), x, B * T);
  }
  {
    NvtxRange r(ctx, NvtxLevel::Layer, core_name_);
    if (p.lab >= 0) {  // laptime lab's v1 (its scores and probabilities in naive's slots) or v2
      lab::attention_version(p.lab)(
          {at(s.heads), at(s.qkv), reinterpret_cast<float*>(at(s.scores)), at(s.probs), B, T, H_, hd_, dtype_}, st);
    } else {
      switch (p.kind) {
        case AttentionKind::Cudnn:
          p.sdpa.run(ctx, at(s.heads), at(s.qkv));
          break;
        case AttentionKind::Wgmma:
          flash_attention_wgmma_forward(at(s.heads), at(s.qkv), B, T, H_, st);
          break;
        case AttentionKind::Flash:
          if (dtype_ == DType::F32)
            flash_attention_f32_forward(reinterpret_cast<float*>(at(s.heads)),
                                        reinterpret_cast<const float*>(at(s.qkv)), B, T, H_, hd_, st);
          else
            flash_attention_forward(at(s.heads), at(s.qkv), B, T, H_, st);
          break;
        default: {
          split_qkv_heads(dtype_, at(s.q), at(s.k), at(s.v), at(s.qkv), B, T, H_, hd_, st);
          const float scale = 1.f / std::sqrt(static_cast<float>(hd_));
          p.scores->run(ctx, at(s.scores), at(s.q), at(s.k), nullptr, scale, 0.f);
          causal_softmax(dtype_, at(s.probs), reinterpret_cast<const float*>(at(s.scores)), B * H_, T, st);
          // The P·V output reuses the q slot: q is dead once the scores exist.
          p.pv->run(ctx, at(s.q), at(s.probs), at(s.v));
          merge_heads(dtype_, at(s.heads), at(s.q), B, T, H_, hd_, st);
        }
      }
    }
  }
  NvtxRange r(ctx, NvtxLevel::Layer, c_proj_name_);
  c_proj_.forward(ctx, y, at(s.heads), B * T, acc);
}

}  // namespace laptime
