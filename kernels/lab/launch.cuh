// laptime lab's launchers: one signature per kernel family (an Args struct, then the stream), and
// per version of the registry (kernels/lab/registry.h) the function that enqueues it. The
// production versions are the models' own launchers in kernels/ (layernorm_forward, ...), not
// copies; the plainer versions live in kernels/lab/<family>.cu. A version index is 0 for v1.
//
// Args fields read as the launchers do everywhere: outputs first, then inputs, then the named
// dimensions; a learner's file takes them in the same order (kernels/lab/try_signature.h). A version that cannot run a case says why through the family's *_refusal
// (a non-empty sentence), and its launcher is then not called. `laptime lab` (bench/lab/) and
// the models' --kernel swap-in (layers/, models/) call these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime.h>

#include "core/dtype.h"
#include "kernels/stem.cuh"

namespace laptime::lab {

// A version's launcher: a function of the ladder, or a learner's file loaded into this process
// (kernels/lab/user_kernel.h), which carries its loaded kernel.
template <class Args>
using Launch = std::function<void(const Args&, cudaStream_t)>;
template <class Args>
using LaunchFn = void (*)(const Args&, cudaStream_t);

// The launcher of a learner's file loaded as version `index` of the kernel whose arguments are
// Args; empty when there is none (kernels/lab/user_kernel.cpp).
template <class Args>
Launch<Args> user_version_launch(int index);

// versions[index]; past the ladder, the learner's file loaded as that version; empty when
// neither: every family's table lookup.
template <class Args, std::size_t N>
Launch<Args> version_at(const LaunchFn<Args> (&versions)[N], int index) {
  if (index >= 0 && static_cast<std::size_t>(index) < N)
    return versions[index] ? Launch<Args>(versions[index]) : Launch<Args>();
  return user_version_launch<Args>(index);
}

struct LayerNormArgs {
  void* out;           // [rows, C] of dtype
  const void* in;      // [rows, C]
  const void* weight;  // [C]
  const void* bias;    // [C]
  int rows, C;
  float eps;
  DType dtype;  // F32 or BF16
};
using LayerNormLaunch = Launch<LayerNormArgs>;
LayerNormLaunch layernorm_version(int index);  // empty past the last version and the loaded files

struct BiasGeluArgs {
  void* out;         // [rows, C]
  const void* in;    // [rows, C]; out may not alias it (v1 writes x + b to out first)
  const void* bias;  // [C]
  int rows, C;
  DType dtype;
};
using BiasGeluLaunch = Launch<BiasGeluArgs>;
BiasGeluLaunch bias_gelu_version(int index);

struct AttentionArgs {
  void* out;        // [B, T, C], C = H·hd
  const void* qkv;  // [B, T, 3C]: q | k | v, each (head, dim)
  float* scores;    // v1 only: [B·H, T, T] fp32 (attention_scratch_bytes)
  void* probs;      // v1 only: [B·H, T, T] of dtype
  int B, T, H, hd;
  DType dtype;
};
using AttentionLaunch = Launch<AttentionArgs>;
// Empty for a version whose launcher lives with its library (v4, cuDNN: the lab runs it through
// layers/gpt2/sdpa_cudnn.h) and past the last version and the loaded files.
AttentionLaunch attention_version(int index);
std::string attention_refusal(int index, DType dtype, int hd);  // "" when the version runs it
// Bytes of scores + probs version `index` needs at (B, T, H) (0 for all but v1); probs start at
// attention_probs_offset into the same allocation.
std::size_t attention_scratch_bytes(int index, int B, int T, int H, DType dtype);
std::size_t attention_probs_offset(int B, int T, int H);

struct EmbeddingArgs {
  void* out;              // [B, T, C]
  const int32_t* tokens;  // [B, T], each in [0, vocab)
  const void* wte;        // [vocab, C]
  const void* wpe;        // [>= T, C]
  int B, T, C;
  DType dtype;
};
using EmbeddingLaunch = Launch<EmbeddingArgs>;
EmbeddingLaunch embedding_version(int index);

struct ResidualArgs {
  void* out;      // [n]; may equal x
  const void* x;  // [n]
  const void* r;  // [n]
  int64_t n;
  DType dtype;
};
using ResidualLaunch = Launch<ResidualArgs>;
ResidualLaunch residual_version(int index);

struct ResidualLayerNormArgs {
  void* x_out;         // [rows, C] = x + r; may equal x
  void* y;             // [rows, C] = layernorm(x + r)
  const void* x;       // [rows, C]
  const void* r;       // [rows, C]
  const void* weight;  // [C]
  const void* bias;    // [C]
  int rows, C;
  float eps;
  DType dtype;
};
using ResidualLayerNormLaunch = Launch<ResidualLayerNormArgs>;
ResidualLayerNormLaunch residual_layernorm_version(int index);

struct QuantizeArgs {
  void* out;               // [n] e4m3
  const float* inv_scale;  // device, one float
  const void* in;          // [n] bf16
  int64_t n;
};
using QuantizeLaunch = Launch<QuantizeArgs>;
QuantizeLaunch quantize_version(int index);

struct AmaxArgs {
  float* amax;     // device, one float; accumulates: the caller zeroes it first
  const void* in;  // [n] bf16
  int64_t n;
};
using AmaxLaunch = Launch<AmaxArgs>;
AmaxLaunch amax_version(int index);

struct MaxPoolArgs {
  void* out;       // [N, Ho, Wo, C], Ho = (H - 1) / 2 + 1
  const void* in;  // [N, H, W, C]
  int N, H, W, C;
  DType dtype;
};
using MaxPoolLaunch = Launch<MaxPoolArgs>;
MaxPoolLaunch maxpool_version(int index);

struct AvgPoolArgs {
  void* out;       // [N, C]
  const void* in;  // [N, H, W, C]
  int N, H, W, C;
  DType dtype;
};
using AvgPoolLaunch = Launch<AvgPoolArgs>;
AvgPoolLaunch avgpool_version(int index);

struct StemArgs {
  void* out;           // [N, Po, Po, C] bf16, Po = pool_out_size(Hs - 3, 3, 2, 1)
  const void* in;      // [N, Hs, Hs, 16] bf16: the image's space-to-depth transform
  const void* weight;  // [C, 4, 4, 16] bf16 (BatchNorm folded)
  const void* bias;    // [C] bf16
  int N, Hs, C;
  const FusedStemPlan* plan;  // v2-v4: from stem_plan() for this N, Hs, C; v1: unused
};
using StemLaunch = Launch<StemArgs>;
StemLaunch stem_version(int index);
// "" when version `index` runs (N, Hs, C) on `device`, else why not (one sentence): v1 and v2
// take what the fused stem takes (fused_stem_refusal), v3 needs the wgmma core too, v4 the
// overlapped core's one conv row a chunk (fused_stem_overlap_refusal).
std::string stem_refusal(int index, int Hs, int C, int device);
// v2-v4: the plan of their core (fused_stem_plan); v1 needs none (an empty plan).
FusedStemPlan stem_plan(int index, int N, int Hs, int C, int device);

struct ConvEpilogueArgs {
  void* y;               // [rows, C], updated in place
  const void* bias;      // [C]
  const void* residual;  // [rows, C] or nullptr
  int64_t rows;
  int C;
  bool relu;
  DType dtype;
};
using ConvEpilogueLaunch = Launch<ConvEpilogueArgs>;
ConvEpilogueLaunch conv_epilogue_version(int index);

// The learner's-file launchers of every family (kernels/lab/user_kernel.cpp).
template <>
LayerNormLaunch user_version_launch<LayerNormArgs>(int index);
template <>
BiasGeluLaunch user_version_launch<BiasGeluArgs>(int index);
template <>
AttentionLaunch user_version_launch<AttentionArgs>(int index);
template <>
EmbeddingLaunch user_version_launch<EmbeddingArgs>(int index);
template <>
ResidualLaunch user_version_launch<ResidualArgs>(int index);
template <>
ResidualLayerNormLaunch user_version_launch<ResidualLayerNormArgs>(int index);
template <>
QuantizeLaunch user_version_launch<QuantizeArgs>(int index);
template <>
AmaxLaunch user_version_launch<AmaxArgs>(int index);
template <>
MaxPoolLaunch user_version_launch<MaxPoolArgs>(int index);
template <>
AvgPoolLaunch user_version_launch<AvgPoolArgs>(int index);
template <>
StemLaunch user_version_launch<StemArgs>(int index);
template <>
ConvEpilogueLaunch user_version_launch<ConvEpilogueArgs>(int index);

}  // namespace laptime::lab
