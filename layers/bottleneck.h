// One ResNet v1.5 bottleneck block (torchvision's Bottleneck), BatchNorms folded into the
// convolutions:
//   t1 = relu(conv1(x))          1×1, in → width
//   t2 = relu(conv2(t1))         3×3, stride s (v1.5 strides here, not in conv1)
//   sc = downsample(x) or x      1×1 stride s, in → 4·width, no activation; present when the
//                                block changes the shape (block 0 of every stage)
//   y  = relu(conv3(t2) + sc)    1×1, width → 4·width; the residual add and the ReLU ride in
//                                conv3's call (cuDNN's fused graph or cuBLASLt's epilogue,
//                                whichever measured faster), so the block launches no separate add
//
// The projection shortcut folded into conv3 (offer_folded_shortcut; bf16, tf32, fp32): conv3 and
// the downsample are both 1×1 and their sum is one product over their inputs side by side,
//   y  = relu([W3 | Wd] · [t2 ; x strided] + (b3 + bd))
// so a block with a downsample can run a copy that puts t2 and x (subsampled) side by side
// (kernels/concat.cuh, in the downsample's range) and one convolution over K = width + in (in
// conv3's range), instead of the downsample writing its [N, Ho, Wo, 4·width] output and conv3
// reading it back. At ResNet-50's layer1.0 that is 411 MB written and read again at B256, against
// a 205 MB copy. prepare() times both ways on the block's buffers and keeps the faster
// (LAPTIME_RESNET_SHORTCUT forces one); describe_shortcut() says which ran and both times.
// One NVTX range for the block (`layer2.1`, level Block) around one per convolution.
//
// fp8 on the e4m3 stream (use_e4m3_stream(): layers/e4m3_block.h) the block's input and output
// are e4m3 and forward_e4m3() runs; forward() is then its calibration pass, the bf16 plans, and
// hands the stream block the bf16 shortcut and output to record.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/context.h"
#include "core/nvtx.h"
#include "layers/conv2d.h"
#include "layers/device_weights.h"
#include "layers/e4m3_block.h"

namespace laptime {

// The folded shortcut's weights for the block `prefix` (in → width → 4·width) from the folded
// `<prefix>.conv3` and `<prefix>.downsample` in `w`: `<prefix>.conv3.weight` [4·width, 1, 1,
// width + in], row o = [conv3's row o, the downsample's row o], and `<prefix>.conv3.bias`, the
// two biases' sum, added to `out`. Host, at load.
void add_folded_shortcut_weights(HostWeights& out, const HostWeights& w, const std::string& prefix, int in_channels,
                                 int width);

class Bottleneck {
 public:
  static constexpr int kExpansion = 4;  // output channels = 4 · width

  // `prefix` is `layer<s>.<b>`; weights `<prefix>.conv{1,2,3}` and, when the block changes
  // shape, `<prefix>.downsample` (each `.weight` KRSC and `.bias`, BatchNorm folded).
  Bottleneck(const DeviceWeights& w, const std::string& prefix, int in_channels, int width, int stride,
             Precision precision);

  int in_channels() const { return in_; }
  int out_channels() const { return kExpansion * width_; }
  int out_size(int in) const { return conv2_.shape().out_size(in); }
  bool has_downsample() const { return downsample_.has_value(); }
  std::vector<const Conv2d*> convs() const;  // conv1, conv2, conv3[, downsample]
  // fp8: every convolution's calibration (Conv2d::begin_calibration; no-ops for those without an
  // fp8 candidate).
  void begin_calibration(const Context& ctx);
  void end_calibration(const Context& ctx);

  // fp8: from now on the block runs on the e4m3 stream (layers/e4m3_block.h; the per-layer fp8
  // candidates of its convolutions are not built). Before prepare(), once the model's blocks
  // are in place: the stream block refers to this block's convolutions, so the block must not
  // move after it (ResNet50 calls it when blocks_ is whole).
  void use_e4m3_stream(const Context& ctx);
  // A block with a downsample, outside fp8: offers the folded shortcut above to prepare(). `w`
  // holds `<prefix>.conv3.weight` [4·width, 1, 1, width + in] ([W3 | Wd], BatchNorms folded) and
  // `<prefix>.conv3.bias` (b3 + bd), and must outlive the block. Before prepare().
  void offer_folded_shortcut(const DeviceWeights& w, Precision precision);
  // True when forward() at this input shape runs the folded shortcut (as prepare() chose).
  bool folded_shortcut(int N, int H, int W) const;
  // Tests: after prepare() with the offer, forward() at this shape runs the way given (both were
  // prepared), whatever prepare() chose.
  void choose_shortcut(int N, int H, int W, bool folded);
  // One line on the choice: "folded into conv3 (...): 0.140 ms against 0.240 ms apart; conv3 over
  // t2 and x: <its plan>" or "apart ...", "" for a block without the offer.
  std::string describe_shortcut(int N, int H, int W) const;
  bool e4m3_stream() const { return e4m3_ != nullptr; }
  void drop_e4m3_stream();  // back to bf16 activations (the per-layer fp8 candidates offered again)
  const E4m3Block& e4m3() const { return *e4m3_; }  // with e4m3_stream()

  // Bytes of scratch forward() needs for an input [N, H, W, in]: t1, t2 and the shortcut.
  std::size_t scratch_bytes(int N, int H, int W) const;
  // Prepares every convolution for this input shape (see Conv2d::prepare); y, x and scratch
  // are the buffers forward() will get, and are overwritten. `cache`: plans shared across
  // the model's identical convolutions (nullptr: each its own).
  // On the e4m3 stream the same buffers serve both passes (bf16 at calibration, e4m3 after) and
  // x_scale is the input's scale (its producer's), which the stream block's plans hold.
  void prepare(Context& ctx, int N, int H, int W, void* y, const void* x, void* scratch,
               ConvRoute route = ConvRoute::Auto, ConvPlanCache* cache = nullptr, const float* x_scale = nullptr);
  // y: [N, Ho, Wo, 4·width]; x: [N, H, W, in]. y must not alias x (x is the residual).
  void forward(const Context& ctx, void* y, const void* x, int N, int H, int W, void* scratch) const;
  // The e4m3 stream: y8 and x8 e4m3, x's scale as at prepare() (E4m3Block::forward).
  void forward_e4m3(const Context& ctx, void* y8, const void* x8, const float* x_scale, int N, int H, int W,
                    void* scratch) const;
  // Its range and its convolutions' (conv1, conv2, conv3, downsample) for an input [N, H, W,
  // in], as prepared, with what each computes and moves (layers/layer_cost.h); the block's
  // composite not yet summed.
  void append_costs(std::vector<LayerCost>& out, const std::string& parent, int N, int H, int W) const;

 private:
  struct Slots {
    char* t1;        // [N, H, W, width]
    char* t2;        // [N, Ho, Wo, width]
    char* shortcut;  // [N, Ho, Wo, 4·width], with a downsample only; the folded shortcut's
                     // [N, Ho, Wo, width + in] copy when offered (the slot is the larger of the two)
    char* rest;      // past the three: the e4m3 stream's extra scratch (E4m3Block::extra_scratch_bytes;
                     // the stream's t1, t2 and sc8 take the three above, each large enough for its e4m3)
  };
  Slots slots(void* scratch, int N, int H, int W) const;
  // The folded shortcut's build: its convolution prepared on these buffers, the two ways timed.
  void prepare_shortcut(Context& ctx, int N, int H, int W, void* y, const void* x, const Slots& s, ConvRoute route,
                        ConvPlanCache* cache);
  // [t2 ; x strided] into the shortcut's slot, in the downsample's range.
  void enqueue_concat(const Context& ctx, const Slots& s, const void* x, int N, int H, int W) const;
  // What follows conv2, one way or the other: the copy and the folded conv3, or the downsample (if
  // any) and conv3 adding the shortcut. forward() and prepare()'s timing both run this.
  void enqueue_shortcut_and_conv3(const Context& ctx, void* y, const void* x, const Slots& s, int N, int H, int W,
                                  bool folded) const;
  // The folded shortcut's copy's channels (width + in) when offered, else 0: its scratch slot.
  int folded_channels() const { return conv3_folded_ ? width_ + in_ : 0; }

  NvtxName name_;
  int in_, width_;
  DType dtype_;
  Conv2d conv1_, conv2_, conv3_;
  std::optional<Conv2d> downsample_;
  std::optional<Conv2d> conv3_folded_;  // over [t2 ; x strided], when offered
  NvtxName shortcut_name_;              // `<prefix>.downsample`: the folded shortcut's copy
  struct ShortcutChoice {
    bool folded = false;
    float folded_ms = -1.f, apart_ms = -1.f;  // negative: not timed (forced, or refused)
    std::string note;                          // the switch that forced it, or a refusal
  };
  std::map<std::tuple<int, int, int>, ShortcutChoice> shortcut_;  // by input shape
  std::unique_ptr<E4m3Block> e4m3_;  // the e4m3 stream, when used
};

}  // namespace laptime
