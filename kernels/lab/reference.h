// laptime lab's CPU references: what each kernel of the registry (kernels/lab/registry.h)
// computes, in double precision, one output row at a time, written for obviousness and from the
// definitions, not from the kernels. Row-wise so that the lab can check a sample of the rows of
// a model-sized output (the attention core at B8 T1024 is 13 GFLOP on the host) and every row
// of a small one. Inputs are the values as the device holds them (read back, widened to float),
// so the reference sees the same rounding of the inputs the kernel does.
//
// Host-only; tests/reference/ holds the models' oracles, which the host tests hold these against.
#pragma once

#include <cstdint>
#include <vector>

namespace laptime::lab::ref {

// y[C] = (x - mean) / sqrt(var + eps) * w + b; the variance around the mean.
void layernorm_row(float* y, const float* x, const float* w, const float* b, int64_t C, float eps);

// GPT-2's tanh GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³))), in double.
double gelu(double x);
// y[C] = gelu(x + bias).
void bias_gelu_row(float* y, const float* x, const float* bias, int64_t C);

// Row (b, t) of the causal attention core: y[H·hd] for query position t of sequence b; qkv is
// the whole [B, T, 3·H·hd] input (q | k | v, each (head, dim)), scale 1/sqrt(hd).
void attention_row(float* y, const float* qkv, int64_t T, int64_t H, int64_t hd, int64_t b, int64_t t);

// y[C] = wte[token] + wpe[t].
void embedding_row(float* y, const float* wte, const float* wpe, int32_t token, int64_t t, int64_t C);

// y[n] = x + r.
void add_row(float* y, const float* x, const float* r, int64_t n);

// The e4m3 ("fn") value nearest v: found among the 254 finite encodings, ties to the even
// mantissa, saturated to ±448 (what laptime's kernels do); NaN stays NaN.
float e4m3_round(float v);
// The value of an e4m3 encoding (0x7f and 0xff: NaN).
float e4m3_value(uint8_t bits);
// q[C] = e4m3_round(float(x · inv_scale)): the product in float, as the device forms it.
void quantize_row(float* q, const float* x, float inv_scale, int64_t C);

// max |x| over n values, NaN when one is NaN.
float amax(const float* x, int64_t n);

// Image n's global average: y[C] = the mean over its HW pixels of in: [N, HW, C], summed in double.
void avgpool_image(float* y, const float* in, int64_t HW, int64_t C, int64_t n);
// Output pixel (n, ho, wo) of the 3 x 3 stride-2 padding-1 max pool: y[C]; in: [N, H, W, C].
void maxpool_pixel(float* y, const float* in, int64_t H, int64_t W, int64_t C, int64_t n, int64_t ho, int64_t wo);
// The stem's pooled pixel (n, py, px): y[C] = max over the 3 x 3/2 window (clipped to the conv
// output, So = Hs - 3 a side) of max(0, bias[o] + sum_{a,b<4, c<16} in[n, y+a, x+b, c] · w[o, a, b, c]);
// in [N, Hs, Hs, 16], w [C, 4, 4, 16].
void stem_pixel(float* y, const float* in, const float* w, const float* bias, int64_t Hs, int64_t C, int64_t n,
                int64_t py, int64_t px);

// y[C] = act(y0 + bias (+ residual)); residual may be null; act ReLU when relu.
void conv_epilogue_row(float* y, const float* y0, const float* bias, const float* residual, int64_t C, bool relu);

}  // namespace laptime::lab::ref
