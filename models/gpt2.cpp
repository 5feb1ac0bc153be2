#include "models/gpt2.h"

#include <cmath>
#include <string>

#include "core/check.h"
#include "kernels/convert.cuh"

namespace laptime {

namespace {
std::string block(int i) { return "h." + std::to_string(i); }

// Host-only checks of what the model is asked to be, before any device work (the device's
// properties are read already: fp8's check needs them).
const GPT2Config& checked(const GPT2Config& cfg, const Context& ctx, Precision precision, int max_batch, int max_seq) {
  if (precision == Precision::FP8) {
    const std::string why = fp8_refusal(ctx);
    require(why.empty(), why);
  }
  cfg.validate();
  require(max_batch > 0, "batch size must be at least 1, got " + std::to_string(max_batch) + ".");
  require(max_seq > 0, "sequence length must be at least 1, got " + std::to_string(max_seq) + ".");
  require(max_seq <= cfg.n_ctx, "sequence length " + std::to_string(max_seq) + " exceeds the model's context of " +
                                    std::to_string(cfg.n_ctx) + " positions.");
  return cfg;
}
}  // namespace

void GPT2Config::validate() const {
  auto positive = [](int v, const char* what) {
    require(v > 0, std::string("GPT-2 config: ") + what + " must be positive, got " + std::to_string(v) + ".");
  };
  positive(n_layer, "n_layer");
  positive(n_head, "n_head");
  positive(n_embd, "n_embd");
  positive(vocab_size, "vocab_size");
  positive(n_ctx, "n_ctx");
  require(n_embd % n_head == 0, "GPT-2 config: n_embd (" + std::to_string(n_embd) + ") is not divisible by n_head (" +
                                    std::to_string(n_head) + ").");
  require(layer_norm_epsilon > 0.f && std::isfinite(layer_norm_epsilon),
          "GPT-2 config: layer_norm_epsilon must be a positive number.");
}

GPT2Config GPT2Config::from_file(const SafeTensors& file) {
  const std::string model = file.meta("laptime.model");
  require(model == "gpt2", file.source() + " holds a '" + model + "' model, not gpt2.");
  auto as_int = [&](const char* key) {
    const int64_t v = file.meta_int(key);
    require(v > 0 && v < (int64_t{1} << 31),
            file.source() + ": metadata " + key + " = " + std::to_string(v) + " is out of range.");
    return static_cast<int>(v);
  };
  GPT2Config c;
  c.n_layer = as_int("gpt2.n_layer");
  c.n_head = as_int("gpt2.n_head");
  c.n_embd = as_int("gpt2.n_embd");
  c.vocab_size = as_int("gpt2.vocab_size");
  c.n_ctx = as_int("gpt2.n_ctx");
  if (file.metadata().count("gpt2.layer_norm_epsilon"))
    c.layer_norm_epsilon = static_cast<float>(file.meta_double("gpt2.layer_norm_epsilon"));
  c.validate();
  return c;
}

HostWeights load_gpt2_weights(const SafeTensors& file, const GPT2Config& cfg) {
  cfg.validate();
  const int64_t C = cfg.n_embd;
  HostWeights w;
  w.add_from(file, "wte.weight", {cfg.vocab_size, C});
  w.add_from(file, "wpe.weight", {cfg.n_ctx, C});
  for (int i = 0; i < cfg.n_layer; ++i) {
    const std::string p = block(i);
    w.add_from(file, p + ".ln_1.weight", {C});
    w.add_from(file, p + ".ln_1.bias", {C});
    w.add_from(file, p + ".attn.c_attn.weight", {3 * C, C});
    w.add_from(file, p + ".attn.c_attn.bias", {3 * C});
    w.add_from(file, p + ".attn.c_proj.weight", {C, C});
    w.add_from(file, p + ".attn.c_proj.bias", {C});
    w.add_from(file, p + ".ln_2.weight", {C});
    w.add_from(file, p + ".ln_2.bias", {C});
    w.add_from(file, p + ".mlp.c_fc.weight", {4 * C, C});
    w.add_from(file, p + ".mlp.c_fc.bias", {4 * C});
    w.add_from(file, p + ".mlp.c_proj.weight", {C, 4 * C});
    w.add_from(file, p + ".mlp.c_proj.bias", {C});
  }
  w.add_from(file, "ln_f.weight", {C});
  w.add_from(file, "ln_f.bias", {C});
  return w;
}

HostWeights random_gpt2_weights(const GPT2Config& cfg, uint64_t seed) {
  cfg.validate();
  const int64_t C = cfg.n_embd;
  const float std = 0.02f, proj_std = 0.02f / std::sqrt(2.f * cfg.n_layer);
  WeightRng rng(seed);
  HostWeights w;
  auto normal = [&](const std::string& name, std::vector<int64_t> shape, float mean, float s) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    w.add(name, std::move(shape), rng.normal(n, mean, s));
  };
  normal("wte.weight", {cfg.vocab_size, C}, 0.f, std);
  normal("wpe.weight", {cfg.n_ctx, C}, 0.f, 0.01f);
  auto layernorm = [&](const std::string& p) {
    normal(p + ".weight", {C}, 1.f, 0.1f);
    normal(p + ".bias", {C}, 0.f, 0.1f);
  };
  for (int i = 0; i < cfg.n_layer; ++i) {
    const std::string p = block(i);
    layernorm(p + ".ln_1");
    normal(p + ".attn.c_attn.weight", {3 * C, C}, 0.f, std);
    normal(p + ".attn.c_attn.bias", {3 * C}, 0.f, std);
    normal(p + ".attn.c_proj.weight", {C, C}, 0.f, proj_std);
    normal(p + ".attn.c_proj.bias", {C}, 0.f, std);
    layernorm(p + ".ln_2");
    normal(p + ".mlp.c_fc.weight", {4 * C, C}, 0.f, std);
    normal(p + ".mlp.c_fc.bias", {4 * C}, 0.f, std);
    normal(p + ".mlp.c_proj.weight", {C, 4 * C}, 0.f, proj_std);
    normal(p + ".mlp.c_proj.bias", {C}, 0.f, std);
  }
  layernorm("ln_f");
  return w;
}

GPT2::GPT2(Context& ctx, const GPT2Config& cfg, const HostWeights& weights, Precision precision, int max_batch,
           int max_seq, AttentionKind attention, GeluPlacement gelu, GemmChoice gemm)
    : cfg_(checked(cfg, ctx, precision, max_batch, max_seq)),
      precision_(precision),
      max_batch_(max_batch),
      max_seq_(max_seq),
      vocab_stride_((cfg.vocab_size + 127) / 128 * 128),
      weights_(ctx, weights, activation_dtype(precision)),
      wte_(weights_.get("wte.weight")),
      wpe_(weights_.get("wpe.weight")),
      tuner_(gemm == GemmChoice::Timed || precision == Precision::FP8
                 ? std::make_unique<GemmTuner>(gemm == GemmChoice::Timed)
                 : nullptr),
      embed_name_("wte"),
      head_name_("lm_head"),
      ln_f_(weights_, "ln_f", cfg.n_embd, cfg.layer_norm_epsilon, cfg.kernels),
      lm_head_weight_(static_cast<std::size_t>(vocab_stride_) * cfg.n_embd * dtype_size(activation_dtype(precision))),
      lm_head_(lm_head_weight_.data(), nullptr, activation_dtype(precision), cfg.n_embd,
               static_cast<int>(vocab_stride_), precision, vocab_stride_) {
  // Build-time device work runs on ctx.stream(), as forward() does, after the weights' upload
  // (DeviceWeights, on the same stream).
  const cudaStream_t st = ctx.stream();
  const std::size_t wte_bytes = static_cast<std::size_t>(cfg.vocab_size) * cfg.n_embd * dtype_size(dtype());
  CUDA_CHECK(cudaMemsetAsync(lm_head_weight_.data(), 0, lm_head_weight_.bytes(), st));
  CUDA_CHECK(cudaMemcpyAsync(lm_head_weight_.data(), wte_, wte_bytes, cudaMemcpyDeviceToDevice, st));
  lm_head_.set_name("lm_head");
  if (tuner_ && cfg.eager_loop) tuner_->set_replay(GemmTuner::Replay::Eager);
  blocks_.reserve(cfg.n_layer);
  for (int i = 0; i < cfg.n_layer; ++i)
    blocks_.emplace_back(weights_, block(i), cfg.n_embd, cfg.n_head, cfg.layer_norm_epsilon, precision, attention, gelu,
                         cfg.kernels);
  embedding_ = lab::embedding_version(lab::chosen_version(cfg.kernels, "embedding", dtype()));

  const std::size_t es = dtype_size(dtype());
  const std::size_t bt = static_cast<std::size_t>(max_batch) * max_seq;
  ArenaLayout l;
  const std::size_t tokens_off = l.reserve(bt * sizeof(int32_t));
  const std::size_t x_off = l.reserve(bt * cfg.n_embd * es);
  // The final LayerNorm's output reuses the block scratch, which is at least [B, T, C].
  const std::size_t scratch_off = l.reserve(blocks_[0].scratch_bytes(max_batch, max_seq));
  const std::size_t logits_off = l.reserve(bt * vocab_stride_ * es);
  arena_ = DeviceBuffer(l.bytes());
  tokens_ = arena_.as<int32_t>(tokens_off);
  x_ = arena_.as<char>(x_off);
  scratch_ = arena_.as<char>(scratch_off);
  logits_ = arena_.as<char>(logits_off);
  CUDA_CHECK(cudaMemsetAsync(arena_.data(), 0, arena_.bytes(), st));  // valid token ids before the first upload

  prepare(ctx, max_batch, max_seq);
  CUDA_CHECK(cudaStreamSynchronize(st));  // the build's device work done before the constructor returns
}

void GPT2::prepare(Context& ctx, int B, int T) {
  check_shape(B, T);
  if (prepared_.count({B, T})) return;
  for (TransformerBlock& b : blocks_) b.prepare(ctx, B, T, tuner_.get());
  lm_head_.prepare(ctx, B * T, tuner_.get());
  prepared_.insert({B, T});
}

void GPT2::calibrate(Context& ctx, int B, int T) {
  if (precision_ != Precision::FP8) return;
  check_shape(B, T);
  require(prepared_.count({B, T}) > 0, "GPT-2 was not prepared for B=" + std::to_string(B) + " T=" + std::to_string(T) +
                                           "; prepare it before calibrating.");
  for (TransformerBlock& b : blocks_) b.begin_calibration(ctx);
  lm_head_.begin_calibration(ctx);
  calibrated_ = true;  // forward() below runs the bf16 plans, recording each fp8 GEMM's input amax
  forward(ctx, B, T);
  for (TransformerBlock& b : blocks_) b.end_calibration(ctx);  // the first waits for the pass
  lm_head_.end_calibration(ctx);
}

std::vector<std::string> GPT2::describe_fp8(int B, int T) const {
  if (precision_ != Precision::FP8) return {};
  const int rows = B * T;
  const TransformerBlock& b = blocks_.at(0);
  std::vector<std::string> v;
  const std::string all = " (all " + std::to_string(blocks_.size()) + " blocks): ";
  v.push_back("h.*.attn.c_attn" + all + b.attn().c_attn().fp8_report(rows));
  v.push_back("h.*.attn.c_proj" + all + b.attn().c_proj().fp8_report(rows));
  v.push_back("h.*.mlp.c_fc" + all + b.mlp().c_fc().fp8_report(rows));
  v.push_back("h.*.mlp.c_proj" + all + b.mlp().c_proj().fp8_report(rows));
  if (const std::string pair = b.mlp().fp8_report(rows); !pair.empty())
    v.push_back("h.*.mlp (c_fc and c_proj together)" + all + pair);
  v.push_back("lm_head: " + lm_head_.fp8_report(rows));
  return v;
}

std::vector<std::string> GPT2::fp8_layers(int B, int T) const {
  std::vector<std::string> v;
  if (precision_ != Precision::FP8) return v;
  const int rows = B * T;
  for (const TransformerBlock& b : blocks_)
    for (const Linear* l : {&b.attn().c_attn(), &b.attn().c_proj(), &b.mlp().c_fc(), &b.mlp().c_proj()})
      if (l->runs_fp8(rows)) v.push_back(l->name());
  if (lm_head_.runs_fp8(rows)) v.push_back(lm_head_.name());
  return v;
}

void GPT2::check_shape(int B, int T) const {
  require(B >= 1 && B <= max_batch_, "batch size " + std::to_string(B) + " is outside [1, " +
                                         std::to_string(max_batch_) + "] this model was built for.");
  require(T >= 1 && T <= max_seq_, "sequence length " + std::to_string(T) + " is outside [1, " +
                                       std::to_string(max_seq_) + "] this model was built for.");
}

void GPT2::upload_tokens(const Context& ctx, const std::vector<int32_t>& tokens, int B, int T) {
  check_shape(B, T);
  require(tokens.size() == static_cast<std::size_t>(B) * T,
          "expected " + std::to_string(B * T) + " token ids for B=" + std::to_string(B) + ", T=" + std::to_string(T) +
              ", got " + std::to_string(tokens.size()) + ".");
  for (std::size_t i = 0; i < tokens.size(); ++i)
    require(tokens[i] >= 0 && tokens[i] < cfg_.vocab_size, "token id " + std::to_string(tokens[i]) + " at position " +
                                                               std::to_string(i) + " is outside the vocabulary [0, " +
                                                               std::to_string(cfg_.vocab_size) + ").");
  CUDA_CHECK(
      cudaMemcpyAsync(tokens_, tokens.data(), tokens.size() * sizeof(int32_t), cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

void GPT2::forward(const Context& ctx, int B, int T) const {
  check_shape(B, T);
  if (!prepared_.count({B, T}))
    throw Error("GPT-2 was not prepared for B=" + std::to_string(B) + " T=" + std::to_string(T) +
                "; call prepare(ctx, B, T) first, outside the timed loop.");
  if (precision_ == Precision::FP8 && !calibrated_)
    throw Error("GPT-2 in fp8 was not calibrated; call calibrate(ctx, B, T) after upload_tokens(), at build.");
  const int rows = B * T;
  {
    NvtxRange range(ctx, NvtxLevel::Layer, embed_name_);
    embedding_({x_, tokens_, wte_, wpe_, B, T, cfg_.n_embd, dtype()}, ctx.stream());
  }
  for (const TransformerBlock& b : blocks_) b.forward(ctx, x_, B, T, scratch_);
  const DType head_in = lm_head_.input_dtype(rows);
  ln_f_.forward(ctx, scratch_, x_, rows, head_in, head_in == DType::F8E4M3 ? lm_head_.input_inv_scale() : nullptr);
  NvtxRange range(ctx, NvtxLevel::Layer, head_name_);
  lm_head_.forward(ctx, logits_, scratch_, rows);
}

std::vector<LayerCost> GPT2::layer_costs(int B, int T) const {
  check_shape(B, T);
  if (!prepared_.count({B, T}))
    throw Error("internal: GPT-2's layer costs were asked for B=" + std::to_string(B) + " T=" + std::to_string(T) +
                ", which it was not prepared for.");
  const double N = double(B) * T, C = cfg_.n_embd, es = static_cast<double>(dtype_size(dtype()));
  std::vector<LayerCost> v;
  // wte: the N gathered token rows and T position rows, the token ids (int32), the sum.
  LayerCost wte = streaming_cost(embed_name_.str(), "", "embedding", 0, N * C, N * C + T * C, es);
  wte.input_bytes = N * sizeof(int32_t);
  v.push_back(wte);
  for (const TransformerBlock& b : blocks_) b.append_costs(v, "", B, T);
  v.push_back(ln_f_.cost("", B * T, lm_head_.input_dtype(B * T)));  // e4m3 for an fp8 LM head
  // The head multiplies by wte padded to vocab_stride_ rows of zeros; the work is the
  // vocabulary's columns (no bias: tied to wte). fp8: 1-byte weights and input, bf16 logits.
  const bool head8 = lm_head_.runs_fp8(B * T);
  v.push_back(gemm_cost(head_name_.str(), "", N, C, cfg_.vocab_size, head8 ? 1.0 : es, es, false, false));
  if (precision_ == Precision::FP8) v.back().precision = head8 ? "fp8" : "bf16";
  sum_composites(v);
  return v;
}

std::vector<float> GPT2::logits_to_host(const Context& ctx, int B, int T) const {
  check_shape(B, T);
  const int64_t rows = int64_t{B} * T, n = rows * vocab_stride_;
  DeviceBuffer staging(static_cast<std::size_t>(n) * sizeof(float));
  convert_to_f32(staging.as<float>(), dtype(), logits_, n, ctx.stream());
  std::vector<float> out(static_cast<std::size_t>(rows) * cfg_.vocab_size);
  CUDA_CHECK(cudaMemcpy2DAsync(out.data(), cfg_.vocab_size * sizeof(float), staging.data(),
                               vocab_stride_ * sizeof(float), cfg_.vocab_size * sizeof(float), rows,
                               cudaMemcpyDeviceToHost, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return out;
}

}  // namespace laptime
