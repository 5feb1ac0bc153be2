// ResNet-50 (He et al., 2016; torchvision's v1.5, stride in the 3×3 convolution), inference:
//   x = relu(conv1(image))          7×7 stride 2, 3 → w, BatchNorm folded    [B, S/2, S/2, w]
//   x = maxpool(x)                  3×3 stride 2                            [B, S/4, S/4, w]
//   for stage s in 1..4, block b:   Bottleneck, stride 2 in block 0 of stages 2-4
//   logits = fc(avgpool(x))         global mean, then cuBLASLt               [B, classes]
// w = base_width (64). Activations are NHWC in the run's storage type. The stem runs as a 4×4
// stride-1 convolution on the image's space-to-depth transform (layers/resnet50/space_to_depth.h), so the
// model's input is that transform, NHWC [B, Hs, Hs, Cs] (input(); Hs = 115 and Cs = 16 in bf16 at
// 224); upload_input() takes images as PyTorch does, fp32 NCHW [B, 3, S, S], and makes the
// transform on the device, outside the forward pass.
// The stem (conv1, ReLU, max pool) runs either through cuDNN then our max-pool kernel (NVTX
// ranges `conv1`, `maxpool`) or, in bf16, as one fused kernel (layers/resnet50/fused_stem.h: one range
// `conv1`, no `maxpool`); StemKind (layers/resnet50/stem_kind.h) chooses, stem_kind() says which ran.
//
// Everything is sized for (max_batch, image_size) at construction: one weights allocation,
// one activation arena, every cuDNN algorithm and workspace and cuBLASLt plan for that
// shape, each convolution's chosen by timing its candidates (Conv2d, one plan per distinct
// shape; progress and the build time on stderr). All build-time device work runs on ctx's
// stream (the weights' upload included) and the constructor ends with one synchronize.
// forward() enqueues the whole pass on ctx.stream() and never allocates, synchronizes or copies
// from the host, so it can be captured in a CUDA Graph.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/context.h"
#include "layers/resnet50/bottleneck.h"
#include "layers/resnet50/classifier.h"
#include "layers/resnet50/conv2d.h"
#include "layers/device_weights.h"
#include "layers/resnet50/fused_stem.h"
#include "layers/resnet50/pooling.h"
#include "layers/resnet50/space_to_depth.h"
#include "layers/resnet50/stem_kind.h"
#include "weights/safetensors.h"

namespace laptime {

struct ResNetConfig {
  std::array<int, 4> layers{3, 4, 6, 3};  // bottleneck blocks per stage
  int base_width = 64;                    // stem width; stage s (0-based) has inner width base_width·2^s
  int num_classes = 1000;
  int image_size = 224;  // the default input resolution, not a limit
  float bn_eps = 1e-5f;
  // Not the architecture: laptime lab's kernel versions to run (--kernel maxpool=vN), production
  // where none is named.
  lab::KernelChoice kernels;
  // Not the architecture either: forward() will be looped eagerly (not replayed in a CUDA graph),
  // so fp8's per-layer choices charge each candidate its host enqueue time too (GemmTuner::Replay).
  bool eager_loop = false;

  static ResNetConfig resnet50() { return ResNetConfig{}; }
  // From the file's `resnet.*` metadata (weights/FORMAT.md); validated.
  static ResNetConfig from_file(const SafeTensors& file);
  // Throws a sentence naming the bad field when the config cannot be built.
  void validate() const;

  int stage_width(int s) const { return base_width << s; }
  int features() const { return Bottleneck::kExpansion * stage_width(3); }  // the fc's input width
};

// The smallest input side: the network halves the resolution five times.
constexpr int kMinImageSize = 32;

// Host-only checks of a batch and an input size for a config; one sentence each.
void check_resnet50_input(const ResNetConfig& cfg, int batch, int image_size);

// One convolution of the network with the BatchNorm after it.
struct ResNetConv {
  std::string name;    // laptime's: the NVTX range and the folded weights' prefix (`conv1`,
                       // `layer1.0.conv2`, `layer1.0.downsample`)
  std::string weight;  // torchvision's weight: `conv1.weight`, `layer1.0.downsample.0.weight`
  std::string bn;      // torchvision's BatchNorm prefix: `bn1`, `layer1.0.bn2`, `layer1.0.downsample.1`
  ConvShape shape;
};
// Every convolution in forward order (stem, then per block conv1, conv2, conv3, downsample).
std::vector<ResNetConv> resnet50_convs(const ResNetConfig& cfg);

// The file's tensors as they are (torchvision names and OIHW layout, BatchNorm unfolded),
// each shape-checked: a missing or misshapen tensor is one sentence naming it.
HostWeights read_resnet50_params(const SafeTensors& file, const ResNetConfig& cfg);
// Seeded random parameters of those names and shapes: convolutions kaiming-normal
// (fan_out, std = sqrt(2 / (out·k·k))), BatchNorm γ U(0.5, 1.5), β N(0, 0.1), running mean
// N(0, 0.1), running var U(0.5, 1.5); fc weight and bias U(±1/sqrt(in)).
HostWeights random_resnet50_params(const ResNetConfig& cfg, uint64_t seed);
// What the model uploads: per convolution `<name>.weight` [out, k, k, in] (KRSC) and
// `<name>.bias` [out] with its BatchNorm folded in (fold_batchnorm), plus `fc.weight`, `fc.bias`.
HostWeights fold_resnet50_params(const HostWeights& params, const ResNetConfig& cfg);
// read + fold, and random + fold.
HostWeights load_resnet50_weights(const SafeTensors& file, const ResNetConfig& cfg);
HostWeights random_resnet50_weights(const ResNetConfig& cfg, uint64_t seed);

class ResNet50 {
 public:
  // `weights` as from load_resnet50_weights / random_resnet50_weights (folded); each tensor's
  // shape is checked against the config first. `stem`: which stem implementation (Auto: fused
  // where it runs, layers/resnet50/stem_kind.h); Fused where the fused kernel cannot run (not bf16, a width that is not a multiple
  // of 8 up to 64, an image too large for its shared memory) falls back to Cudnn, and
  // stem_variant() says why. A run (bench, forward) builds through build_resnet50
  // (models/policy.h).
  ResNet50(Context& ctx, const ResNetConfig& cfg, const HostWeights& weights, Precision precision, int max_batch,
           int image_size, StemKind stem = StemKind::Auto);

  // Plans another batch size B <= max_batch (max_batch is planned at construction). Build
  // time: may grow the context's workspace, which synchronizes.
  void prepare(Context& ctx, int B);

  // Copies images, fp32 NCHW [B, 3, S, S] as PyTorch takes them, to input() as NHWC in the
  // storage type. Synchronous: call it outside the timed loop.
  void upload_input(const Context& ctx, const std::vector<float>& images, int B);
  void* input() const { return input_; }  // [max_batch, Hs, Hs, Cs] of dtype(), device (see the top)

  // fp8: the activation scales of the fp8 layers from one bf16 pass over input()[0 : B] (B
  // prepared); waits for the stream. A no-op in the other precisions; forward() in fp8 before
  // it throws. Build time.
  void calibrate(Context& ctx, int B);
  // fp8: the NVTX range names of the layers that run fp8 at batch B, and one line on each
  // fp8-capable layer's choice (on the e4m3 stream: the stream's line and the fc's).
  std::vector<std::string> fp8_layers(int B) const;
  std::vector<std::string> describe_fp8(int B) const;

  // logits() = forward of input()[0 : B]. B must have been prepared.
  void forward(const Context& ctx, int B);
  void* logits() const { return logits_; }  // [B, num_classes] of dtype()
  // logits()[0 : B] widened to fp32 on the host. Synchronizes: outside the timed loop.
  std::vector<float> logits_to_host(const Context& ctx, int B) const;

  const ResNetConfig& config() const { return cfg_; }
  Precision precision() const { return precision_; }
  DType dtype() const { return activation_dtype(precision_); }
  int max_batch() const { return max_batch_; }
  int image_size() const { return image_size_; }
  int64_t param_count() const { return weights_.param_count(); }
  std::size_t weight_bytes() const { return weights_.bytes(); }
  std::size_t activation_bytes() const { return arena_.bytes(); }
  StemKind stem_kind() const { return stem_kind_; }  // the stem that runs: Cudnn or Fused
  // fp8: the blocks' activations are e4m3 (layers/resnet50/e4m3_block.h; LAPTIME_RESNET_FP8), and why not
  // when LAPTIME_RESNET_FP8=auto kept them bf16 ("" otherwise).
  bool e4m3_stream() const { return e4m3_stream_; }
  const std::string& e4m3_stream_refusal() const { return e4m3_stream_why_; }
  // For the bench header and JSON: "stem fused", "stem cudnn", or "stem cudnn (fused refused: <why>)".
  std::string stem_variant() const;
  // Every NVTX range of a forward at batch B, prepared, with what it computes and moves
  // (layers/layer_cost.h), parents before children, composites summed: conv1 (as the network
  // defines it: the 7×7 stride-2 convolution on the image; fused, its bytes are the pooled
  // output's and there is no maxpool), [maxpool], every block layer{s}.{b} with conv1, conv2,
  // conv3[, downsample], avgpool, fc.
  std::vector<LayerCost> layer_costs(int B) const;
  std::vector<const Conv2d*> convs() const;  // in forward order
  // One line per convolution, in forward order: its name and Conv2d::describe() at batch B
  // (prepared); then one on the build: plans built and shared, candidates timed, seconds.
  std::vector<std::string> describe_convs(int B) const;

 private:
  void check_batch(int B) const;
  void forward_e4m3(const Context& ctx, int B);  // forward() on the e4m3 stream, calibrated

  ResNetConfig cfg_;
  Precision precision_;
  int max_batch_, image_size_;
  DeviceWeights weights_;
  ConvShape stem_shape_;        // the stem as the weights file has it (7×7 stride 2)
  SpaceToDepthStem s2d_;        // ... and as it runs
  DeviceWeights stem_weights_;  // conv1.weight [w, 4, 4, Cs], conv1.bias
  Conv2d stem_;                 // the cuDNN stem (StemKind::Cudnn; built, not prepared, when fused)
  MaxPool maxpool_;
  std::string stem_refusal_;          // why Fused was asked for and not run, or "" (before stem_kind_: it fills this)
  StemKind stem_kind_;                // resolved: Cudnn or Fused
  DeviceWeights shortcut_weights_;    // outside fp8: each downsample block's [W3 | Wd] and b3 + bd (folded shortcut)
  std::unique_ptr<FusedStem> fused_;  // StemKind::Fused: conv1 + ReLU + max pool in one kernel
  std::vector<Bottleneck> blocks_;
  Classifier head_;
  DeviceBuffer arena_;
  float* staging_ = nullptr;  // [max_batch, 3, S, S] fp32, upload_input's landing slot
  void* input_ = nullptr;     // [max_batch, Hs, Hs, Cs]: s2d_.side(S), s2d_.stored_channels
  void* act_[2] = {};         // ping-pong activations, each the largest stage output
  void* scratch_ = nullptr;   // the largest block scratch (blocks run one after another)
  void* pooled_ = nullptr;    // [max_batch, features]
  void* logits_ = nullptr;    // [max_batch, num_classes]
  std::set<int> prepared_;    // batch sizes with plans
  bool calibrated_ = false;   // fp8: calibrate() ran
  bool calibrating_ = false;  // fp8: calibrate()'s bf16 pass is running
  // fp8 on the e4m3 stream: the blocks run Bottleneck::forward_e4m3; the stem's pooled bf16
  // output (in scratch_) is quantized once into act_[1] with stem_scale_.
  bool e4m3_stream_ = false;
  std::string e4m3_stream_why_;
  Fp8Scale stem_scale_;
  NvtxName quantize_name_{"quantize"};
  ConvPlanCache plan_cache_;  // convolution plans shared by identical layers
};

}  // namespace laptime
