// The lab's cases for ResNet-50's kernels (bench/lab/case.h). "Huge": for the max pool every
// value negative (about -1e4), so a padded position treated as 0 would win; for the convolution
// epilogue, y and the residual of magnitude 1e30; for the stem, inputs around 100 ± 100 (sums of
// ~1e4 a conv pixel: bf16 storage and fp32 sums, no overflow to find, but the rounding of large
// values). "Zeros" for the stem: the input zero, so every output is max(0, bias).
#include "bench/lab/cases.h"
#include "core/check.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/reference.h"
#include "kernels/pooling.cuh"

#include <map>

namespace laptime::lab {
namespace {

class MaxPoolCase : public LabCase {
 public:
  MaxPoolCase(int N, int H, int W, int C, DType dt)
      : N_(N),
        H_(H),
        W_(W),
        C_(C),
        Ho_(pool_out_size(H, 3, 2, 1)),
        Wo_(pool_out_size(W, 3, 2, 1)),
        dt_(dt),
        in_(dt, int64_t{N} * H * W * C),
        out_(dt, int64_t{N} * Ho_ * Wo_ * C) {
    rows_ = int64_t{N} * Ho_ * Wo_;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(in_, kind, seed, 1.f, -1e4f, 100.f, s);
  }
  void read_inputs(cudaStream_t s) override { h_in_ = in_.download(s); }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    maxpool_version(index)({out_.data(), in_.data(), N_, H_, W_, C_, dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    const int64_t wo = row % Wo_, ho = row / Wo_ % Ho_, n = row / (int64_t{Wo_} * Ho_);
    ref::maxpool_pixel(ref, h_in_.data(), H_, W_, C_, n, ho, wo);
  }

 private:
  int N_, H_, W_, C_, Ho_, Wo_;
  DType dt_;
  LabTensor in_, out_;
  std::vector<float> h_in_;
};

// The global average pool: one output row an image. "Huge": inputs of magnitude 1e30 (49 of them
// summed stay inside fp32).
class AvgPoolCase : public LabCase {
 public:
  AvgPoolCase(int N, int H, int W, int C, DType dt)
      : N_(N), H_(H), W_(W), C_(C), dt_(dt), in_(dt, int64_t{N} * H * W * C), out_(dt, int64_t{N} * C) {
    rows_ = N;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(in_, kind, seed, 1.f, 0.f, 1e30f, s);
  }
  void read_inputs(cudaStream_t s) override { h_in_ = in_.download(s); }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    avgpool_version(index)({out_.data(), in_.data(), N_, H_, W_, C_, dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::avgpool_image(ref, h_in_.data(), int64_t{H_} * W_, C_, row);
  }

 private:
  int N_, H_, W_, C_;
  DType dt_;
  LabTensor in_, out_;
  std::vector<float> h_in_;
};

class ConvEpilogueCase : public LabCase {
 public:
  ConvEpilogueCase(int64_t rows, int C, bool residual, bool relu, DType dt)
      : C_(C),
        residual_(residual),
        relu_(relu),
        dt_(dt),
        y0_(dt, rows * C),
        y_(dt, rows * C),
        bias_(dt, C),
        res_(dt, residual ? rows * C : 0) {
    rows_ = rows;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(y0_, kind, seed, 1.f, 0.f, 1e30f, s);
    bias_.fill(seed + 1, 0.f, 0.5f, s);
    if (residual_) draw(res_, kind, seed + 2, 1.f, 0.f, 1e30f, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_y0_ = y0_.download(s);
    h_bias_ = bias_.download(s);
    if (residual_) h_res_ = res_.download(s);
  }
  void reset(cudaStream_t s) override { y_.copy_from(y0_, s); }  // in place: y is the input too
  void run(int index, const Context& ctx) override {
    conv_epilogue_version(index)({y_.data(), bias_.data(), residual_ ? res_.data() : nullptr, rows_, C_, relu_, dt_},
                                 ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return y_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    const size_t at = static_cast<size_t>(row * C_);
    ref::conv_epilogue_row(ref, &h_y0_[at], h_bias_.data(), residual_ ? &h_res_[at] : nullptr, C_, relu_);
  }

 private:
  int C_;
  bool residual_, relu_;
  DType dt_;
  LabTensor y0_, y_, bias_, res_;
  std::vector<float> h_y0_, h_bias_, h_res_;
};

// Rows are pooled pixels (n, py, px), C wide. The s2d input is drawn as it is, all 16 channels
// (the model's transform zeroes 4 of them; the kernels take any values there).
class StemCase : public LabCase {
 public:
  StemCase(int N, int Hs, int C)
      : N_(N),
        Hs_(Hs),
        C_(C),
        Po_(pool_out_size(Hs - 3, 3, 2, 1)),
        in_(DType::BF16, int64_t{N} * Hs * Hs * 16),
        weight_(DType::BF16, int64_t{C} * 256),
        bias_(DType::BF16, C),
        out_(DType::BF16, int64_t{N} * Po_ * Po_ * C) {
    rows_ = int64_t{N} * Po_ * Po_;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(in_, kind, seed, 1.f, 100.f, 100.f, s);
    weight_.fill(seed + 1, 0.f, 0.1f, s);
    bias_.fill(seed + 2, 0.f, 0.5f, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_in_ = in_.download(s);
    h_weight_ = weight_.download(s);
    h_bias_ = bias_.download(s);
  }
  std::string prepare(int index, Context& ctx) override {
    const std::string why = stem_refusal(index, Hs_, C_, ctx.device());
    if (!why.empty()) return why;
    plans_[index] = stem_plan(index, N_, Hs_, C_, ctx.device());
    return "";
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    const auto it = plans_.find(index);
    require(it != plans_.end(), "internal: the stem's version was run before it was prepared.");
    stem_version(index)({out_.data(), in_.data(), weight_.data(), bias_.data(), N_, Hs_, C_, &it->second},
                        ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    const int64_t px = row % Po_, py = row / Po_ % Po_, n = row / (int64_t{Po_} * Po_);
    ref::stem_pixel(ref, h_in_.data(), h_weight_.data(), h_bias_.data(), Hs_, C_, n, py, px);
  }
  // Up to 9 conv pixels of 256 multiply-adds a channel a row: ~150 k a row at 64 channels.
  int64_t max_checked_rows() const override { return 2048; }

 private:
  int N_, Hs_, C_, Po_;
  LabTensor in_, weight_, bias_, out_;
  std::vector<float> h_in_, h_weight_, h_bias_;
  std::map<int, FusedStemPlan> plans_;
};

}  // namespace

std::unique_ptr<LabCase> make_stem_case(const std::vector<int64_t>& d, DType dt) {
  require(dt == DType::BF16, "internal: the stem's lab case is bf16 only.");
  return std::make_unique<StemCase>(static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]));
}

std::unique_ptr<LabCase> make_maxpool_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<MaxPoolCase>(static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]),
                                       static_cast<int>(d[3]), dt);
}
std::unique_ptr<LabCase> make_avgpool_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<AvgPoolCase>(static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2]),
                                       static_cast<int>(d[3]), dt);
}
std::unique_ptr<LabCase> make_conv_epilogue_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<ConvEpilogueCase>(d[0], static_cast<int>(d[1]), d[2] != 0, d[3] != 0, dt);
}

}  // namespace laptime::lab
