// The CPU reference oracle for GPT-2: plain loops in double precision, written for
// obviousness, not speed. Checked against PyTorch's outputs (tests/golden) in CI; the CUDA
// layers are checked against it on fresh random inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "layers/device_weights.h"

namespace laptime::ref {

using Vec = std::vector<float>;

// out[b, t, :] = wte[tokens[b, t], :] + wpe[t, :]
Vec embedding(const std::vector<int32_t>& tokens, const Vec& wte, const Vec& wpe, int B, int T, int C);
Vec layernorm(const Vec& x, const Vec& weight, const Vec& bias, int rows, int C, float eps);
// y[rows, out] = x[rows, in] · W[out, in]ᵀ + b (bias may be empty)
Vec linear(const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out);
// x rounded to bf16 (nearest, ties to even), as the device's weights and inputs are stored.
float round_bf16(float x);

Vec gelu(const Vec& x);  // tanh form

// The weight products below (c_attn, attn.c_proj, c_fc, mlp.c_proj, the LM head) go through
// `gemm` when one is given, under the layer's name (`h.0.attn.c_attn`, `lm_head`), and through
// linear() otherwise: the fp8 emulation (tests/reference/gpt2_fp8_ref.h) swaps in e4m3 operands
// there and leaves the rest of the model as it is.
using GemmFn =
    std::function<Vec(const std::string& name, const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out)>;

// GPT-2 attention: c_proj(causal_mha(c_attn(x))), x: [B, T, C]; weights under `prefix`.
Vec attention(const Vec& x, const HostWeights& w, const std::string& prefix, int B, int T, int C, int n_head,
              const GemmFn* gemm = nullptr);
Vec mlp(const Vec& x, const HostWeights& w, const std::string& prefix, int rows, int C, const GemmFn* gemm = nullptr);
// x + attn(ln_1(x)), then + mlp(ln_2(.)), under prefix `h.i`.
Vec block(const Vec& x, const HostWeights& w, const std::string& prefix, int B, int T, int C, int n_head, float eps,
          const GemmFn* gemm = nullptr);
// Logits [B, T, vocab] of the whole model.
Vec gpt2(const std::vector<int32_t>& tokens, const HostWeights& w, int n_layer, int n_head, int C, int vocab, float eps,
         int B, int T, const GemmFn* gemm = nullptr);

}  // namespace laptime::ref
