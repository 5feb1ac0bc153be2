// The CPU reference oracle for ResNet-50: plain loops in double precision, on NHWC
// activations, written for obviousness, not speed. It reads the parameters as the file
// holds them (torchvision names, OIHW, BatchNorm unfolded), so that the CUDA layers — which
// fold BatchNorm and re-lay weights out at load — are checked against math that does
// neither. Checked against PyTorch's outputs (tests/golden) in CI.
#pragma once

#include <string>
#include <vector>

#include "layers/device_weights.h"
#include "models/resnet50.h"

namespace laptime::ref {

using Vec = std::vector<float>;

inline int conv_out(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }

// y: [N, Ho, Wo, Cout] = x: [N, H, W, Cin] ⋆ w: [Cout, Cin, k, k] (OIHW), zero padding, no bias.
Vec conv2d(const Vec& x, const Vec& w, int N, int H, int W, int Cin, int Cout, int k, int stride, int pad);
// Inference BatchNorm over the last dimension: (x − mean) / sqrt(var + eps) · γ + β, with the
// four vectors `<bn>.{weight,bias,running_mean,running_var}` of `p`.
Vec batchnorm(const Vec& x, const HostWeights& p, const std::string& bn, int C, float eps);
Vec relu(Vec x);
Vec add(const Vec& a, const Vec& b);
// 3×3 stride-2 max pool, padding 1 (padding never wins): [N, H, W, C] → [N, Ho, Wo, C].
Vec maxpool3x3s2(const Vec& x, int N, int H, int W, int C);
// [N, H, W, C] → [N, C], the mean over H·W.
Vec global_avgpool(const Vec& x, int N, int H, int W, int C);
// y[rows, out] = x[rows, in] · W[out, in]ᵀ + b
Vec linear(const Vec& x, const Vec& W, const Vec& b, int rows, int in, int out);

// batchnorm(conv2d(x)), then ReLU when `relu_after`; weights `<conv>.weight` and BatchNorm `bn` of `p`.
Vec conv_bn(const Vec& x, const HostWeights& p, const std::string& conv, const std::string& bn, int N, int H, int W,
            int Cin, int Cout, int k, int stride, int pad, float eps, bool relu_after);

// One torchvision Bottleneck under `prefix` (`layer1.0`): x [N, H, W, Cin] → [N, Ho, Wo, 4·width].
// Its downsample branch is used when stride != 1 or Cin != 4·width.
Vec bottleneck(const Vec& x, const HostWeights& p, const std::string& prefix, int N, int H, int W, int Cin, int width,
               int stride, float eps);

// A bottleneck's place in the network at input side S (the oracle's own walk of the topology).
struct BlockSpec {
  std::string prefix;  // layer<s>.<b>
  int in_channels, width, stride, in_size, out_size;
};
std::vector<BlockSpec> blocks(const ResNetConfig& cfg, int S);

// Logits [N, classes] of the whole network; images NHWC [N, S, S, 3].
Vec resnet50(const Vec& images, const HostWeights& p, const ResNetConfig& cfg, int N, int S);

}  // namespace laptime::ref
