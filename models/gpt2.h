// GPT-2 (Radford et al., 2019), inference forward pass:
//   x = wte[tokens] + wpe[0..T)                        embedding kernel     [B, T, C]
//   for h in blocks: x = h(x)                          TransformerBlock      [B, T, C]
//   logits = ln_f(x) · wteᵀ                            LayerNorm + cuBLASLt  [B, T, vocab]
// The LM head is tied to the token embedding, as in GPT-2.
//
// Everything is sized for (max_batch, max_seq) at construction: one weights allocation,
// one activation arena, every cuBLASLt plan and cuDNN graph for that shape (other shapes:
// prepare()). forward() enqueues the whole pass on ctx.stream() and never plans, allocates,
// synchronizes, copies from the host or looks anything up by name, so it can be captured in
// a CUDA Graph (the build contract, docs/DESIGN-NOTES.md).
//
// fp8 (Precision::FP8): bf16 storage with e4m3 GEMMs where they measured faster
// (layers/linear.h). The activation scales come from one calibration pass: after
// upload_tokens(), calibrate(ctx, B, T) runs the pass in bf16 on those tokens, records every
// fp8 GEMM's input amax on the device, and waits once; forward() before it throws. The
// logits stay bf16 (the LM head writes bf16 from its e4m3 product), and so do the embedding,
// the residual stream, LayerNorm's statistics and the attention core.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/registry.h"
#include "layers/device_weights.h"
#include "layers/gpt2/layernorm.h"
#include "layers/linear.h"
#include "layers/gpt2/transformer_block.h"
#include "weights/safetensors.h"

namespace laptime {

// How the linear layers' cuBLASLt algorithms are chosen: the heuristic's first pick, or the
// fastest of its top candidates timed once per shape at build (layers/gemm_tuner.h).
enum class GemmChoice { Heuristic, Timed };

struct GPT2Config {
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab_size = 50257;
  int n_ctx = 1024;
  float layer_norm_epsilon = 1e-5f;
  // Not the architecture: laptime lab's kernel versions to run (--kernel NAME=VERSION; layernorm,
  // attention, embedding), production where none is named.
  lab::KernelChoice kernels;
  // Not the architecture either: forward() will be looped eagerly (not replayed in a CUDA graph),
  // so fp8's per-layer choices charge each candidate its host enqueue time too (GemmTuner::Replay).
  bool eager_loop = false;

  // GPT-2 small (124M), the default.
  static GPT2Config small() { return GPT2Config{}; }
  // From the file's `gpt2.*` metadata (weights/FORMAT.md); validated.
  static GPT2Config from_file(const SafeTensors& file);
  // Throws a sentence naming the bad field when the config cannot be built.
  void validate() const;
};

// Reads and shape-checks every tensor the config needs (names: weights/FORMAT.md).
HostWeights load_gpt2_weights(const SafeTensors& file, const GPT2Config& cfg);
// Seeded random weights of the config's shapes: N(0, 0.02) weights (projections scaled by
// 1/sqrt(2·n_layer) as in GPT-2), small non-zero biases, LayerNorm gains near 1.
HostWeights random_gpt2_weights(const GPT2Config& cfg, uint64_t seed);

class GPT2 {
 public:
  // `attention`: which attention core every block runs (layers/gpt2/attention_kind.h); a choice
  // that cannot run this precision is refused with one sentence before any device work. The
  // defaults are the plain model's, for tests of it; a run (bench, forward) builds through
  // build_gpt2 (models/policy.h), which chooses all three.
  GPT2(Context& ctx, const GPT2Config& cfg, const HostWeights& weights, Precision precision, int max_batch, int max_seq,
       AttentionKind attention = AttentionKind::Auto, GeluPlacement gelu = GeluPlacement::Auto,
       GemmChoice gemm = GemmChoice::Heuristic);

  // Plans for a shape other than (max_batch, max_seq), which the constructor prepares.
  // Build-time work: call it before forward(B, T) and outside any timed loop or capture.
  void prepare(Context& ctx, int B, int T);
  // The attention core the blocks run at (B, T), once prepared; whether the GELU is in the
  // c_fc GEMM's epilogue.
  AttentionKind attention_kind(int B, int T) const { return blocks_.at(0).attention_kind(B, T); }
  int attention_lab_core() const { return blocks_.at(0).attention_lab_core(); }  // -1, or lab v1 (0) / v2 (1)
  bool gelu_in_epilogue() const { return blocks_.at(0).gelu_in_epilogue(); }
  bool attention_f16_core(int B, int T) const { return blocks_.at(0).attention_f16_core(B, T); }
  // fp8: the activation scales from one bf16 pass over tokens()[0 : B·T] ((B, T) prepared);
  // waits for the stream. A no-op in the other precisions. Build time, outside any timed loop.
  void calibrate(Context& ctx, int B, int T);
  bool calibrated() const { return calibrated_; }
  // fp8: one line per distinct GEMM of the blocks, one for the MLP's pair (c_fc writing e4m3 for
  // c_proj, layers/gpt2/mlp.h) and one for the LM head at (B, T): fp8 or bf16, and the measured times.
  // Empty in the other precisions.
  std::vector<std::string> describe_fp8(int B, int T) const;
  // fp8: the NVTX range names of the GEMMs that run fp8 at (B, T) (for the per-layer costs).
  std::vector<std::string> fp8_layers(int B, int T) const;
  // GemmChoice::Timed: milliseconds the build spent timing candidates, and shapes timed.
  double gemm_tuning_ms() const { return tuner_ && tuner_->times_algorithms() ? tuner_->build_ms() : 0.0; }
  int gemm_shapes_timed() const { return tuner_ && tuner_->times_algorithms() ? tuner_->shapes_timed() : 0; }

  // Validates ids (each in [0, vocab)) and shape, and copies them to the device tokens slot.
  // A synchronous copy: call it outside the timed loop.
  void upload_tokens(const Context& ctx, const std::vector<int32_t>& tokens, int B, int T);
  int32_t* tokens() const { return tokens_; }  // [max_batch, max_seq] int32, device

  // logits() = forward of tokens()[0 : B·T]. B <= max_batch, 1 <= T <= max_seq, (B, T) prepared.
  void forward(const Context& ctx, int B, int T) const;
  // [B, T, vocab] of activation_dtype(precision), rows `logits_row_stride()` elements apart:
  // the stride is the vocabulary rounded up to 128 (50257 -> 50304). The LM head multiplies by
  // a zero-padded copy of wte of that many rows, so the GEMM's N is a multiple of 128 and
  // cuBLASLt runs a Hopper kernel instead of an align-1 one (6.7 ms of a 14.9 ms forward on
  // an H200 before). The padding columns hold zeros.
  void* logits() const { return logits_; }
  int64_t logits_row_stride() const { return vocab_stride_; }
  // The logits of the last forward as dense fp32 [B, T, vocab] on the host. Synchronizes;
  // for tests and tools, never inside a timed loop.
  std::vector<float> logits_to_host(const Context& ctx, int B, int T) const;

  // Every NVTX range of a forward at (B, T), prepared, with what it computes and moves
  // (layers/layer_cost.h), parents before children, composites summed: wte, per block h.{i}
  // (ln_1, attn = {c_attn, core, c_proj}, ln_2, mlp = {c_fc, [gelu], c_proj}), ln_f, lm_head.
  std::vector<LayerCost> layer_costs(int B, int T) const;

  const GPT2Config& config() const { return cfg_; }
  Precision precision() const { return precision_; }
  DType dtype() const { return activation_dtype(precision_); }
  int64_t param_count() const { return weights_.param_count(); }
  std::size_t weight_bytes() const { return weights_.bytes() + lm_head_weight_.bytes(); }
  std::size_t activation_bytes() const { return arena_.bytes(); }
  int max_batch() const { return max_batch_; }
  int max_seq() const { return max_seq_; }

 private:
  void check_shape(int B, int T) const;

  GPT2Config cfg_;
  Precision precision_;
  int max_batch_, max_seq_;
  int64_t vocab_stride_;
  DeviceWeights weights_;
  const void* wte_ = nullptr;  // weights_ "wte.weight", "wpe.weight": looked up once, at build
  const void* wpe_ = nullptr;
  lab::EmbeddingLaunch embedding_ = nullptr;  // cfg.kernels' version, else production's (v3)
  std::set<std::pair<int, int>> prepared_;    // (B, T)
  std::unique_ptr<GemmTuner> tuner_;          // GemmChoice::Timed, and fp8 (its per-shape choices)
  bool calibrated_ = false;                   // fp8: calibrate() ran
  NvtxName embed_name_, head_name_;
  std::vector<TransformerBlock> blocks_;
  LayerNorm ln_f_;
  DeviceBuffer lm_head_weight_;  // wte.weight [vocab, C] zero-padded to [vocab_stride, C]
  Linear lm_head_;               // tied to wte through that copy
  DeviceBuffer arena_;
  int32_t* tokens_ = nullptr;  // [max_batch, max_seq]
  void* x_ = nullptr;          // residual stream [B, T, C]
  void* scratch_ = nullptr;    // per-block scratch (blocks run one after another)
  void* logits_ = nullptr;     // [B, T, vocab], row stride vocab_stride_
};

}  // namespace laptime
