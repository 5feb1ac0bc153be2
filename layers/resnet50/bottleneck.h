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
// so a block with a downsample copies t2 and x (subsampled) side by side into one buffer
// [N, Ho, Wo, width + in] (kernels/concat.cuh, in the downsample's range) and runs one convolution
// over K = width + in (in conv3's range), instead of the downsample writing its [N, Ho, Wo,
// 4·width] output and conv3 reading it back (ShortcutWay::Folded; Apart is the plain way). At
// ResNet-50's layer1.0 at B256 the apart way writes and reads back 411 MB, the copy moves 411 MB
// (205 read, 205 written) and conv3 reads its residual no more. prepare() times both ways, from
// conv2 to conv3, on the block's own buffers and keeps the faster (LAPTIME_RESNET_SHORTCUT forces
// one); describe_shortcut() says which ran and each way's time.
// One NVTX range for the block (`layer2.1`, level Block) around one per convolution.
//
// fp8 on the e4m3 stream (use_e4m3_stream(): layers/resnet50/e4m3_block.h) the block's input and output
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
#include "layers/resnet50/conv2d.h"
#include "layers/device_weights.h"
#include "layers/resnet50/e4m3_block.h"

namespace laptime {

// The folded shortcut's weights for the block `prefix` (in → width → 4·width) from the folded
// `<prefix>.conv3` and `<prefix>.downsample` in `w`: `<prefix>.conv3.weight` [4·width, 1, 1,
// width + in], row o = [conv3's row o, the downsample's row o], and `<prefix>.conv3.bias`, the
// two biases' sum, added to `out`. Host, at load.
void add_folded_shortcut_weights(HostWeights& out, const HostWeights& w, const std::string& prefix, int in_channels,
                                 int width);

// How a block with a downsample runs its shortcut (see the top of this file).
enum class ShortcutWay { Apart, Folded };
const char* shortcut_way_name(ShortcutWay w);  // "apart", "folded"

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

  // fp8: from now on the block runs on the e4m3 stream (layers/resnet50/e4m3_block.h; the per-layer fp8
  // candidates of its convolutions are not built). Before prepare(), once the model's blocks
  // are in place: the stream block refers to this block's convolutions, so the block must not
  // move after it (ResNet50 calls it when blocks_ is whole).
  void use_e4m3_stream(const Context& ctx);
  // A block with a downsample, outside fp8: offers the folded shortcut above to prepare(). `w`
  // holds `<prefix>.conv3.weight` [4·width, 1, 1, width + in] ([W3 | Wd], BatchNorms folded) and
  // `<prefix>.conv3.bias` (b3 + bd), and must outlive the block. Before prepare().
  void offer_folded_shortcut(const DeviceWeights& w, Precision precision);
  // The way forward() at this input shape runs the shortcut, as prepare() chose (Apart for a block
  // without the offer or without a downsample).
  ShortcutWay shortcut_way(int N, int H, int W) const;
  // Whether prepare() built `way` at this shape: Apart always, Folded with the offer.
  bool has_shortcut_way(int N, int H, int W, ShortcutWay way) const;
  // Tests: after prepare() with the offer, forward() at this shape runs `way`, whatever prepare()
  // chose.
  void choose_shortcut(int N, int H, int W, ShortcutWay way);
  // One line on the choice: "folded (...): folded 0.170 ms, apart 0.240 ms, conv2 to conv3; conv3
  // over both: <its plan>", "" for a block without the offer.
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
  // The folded shortcut's build: its convolutions prepared on these buffers, the ways timed.
  void prepare_shortcut(Context& ctx, int N, int H, int W, void* y, const void* x, const Slots& s,
                        ConvRoute conv3_route, ConvPlanCache* cache);
  // [t2 ; x strided] into the shortcut's slot, in the downsample's range.
  void enqueue_concat(const Context& ctx, const Slots& s, const void* x, int N, int H, int W) const;
  // conv2 and what follows it, one way or another (ShortcutWay). forward() and prepare()'s timing
  // both run this.
  void enqueue_conv2_onward(const Context& ctx, void* y, const void* x, const Slots& s, int N, int H, int W,
                            ShortcutWay way) const;
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
    ShortcutWay way = ShortcutWay::Apart;
    float ms[2] = {-1.f, -1.f};  // by ShortcutWay, conv2 to conv3; negative: not timed (forced)
    std::string note;            // the switch that forced it, or a refusal
  };
  std::map<std::tuple<int, int, int>, ShortcutChoice> shortcut_;  // by input shape
  std::unique_ptr<E4m3Block> e4m3_;                               // the e4m3 stream, when used
};

}  // namespace laptime
