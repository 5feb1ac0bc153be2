// The lab's cases for GPT-2's kernels (bench/lab/case.h). What "huge" means per op:
//   layernorm, residual_layernorm  x with a mean far above its spread: fp32 8 ± 1 (mean / std 14:
//                       E[x²] − mean² loses 2e-5 of the variance there, more than fp32's 1e-5
//                       bound, while a two-pass fp32 sum, even one thread's sequential one, keeps
//                       within a quarter of it), bf16 8192 ± 256 (the widest spread bf16 holds there)
//   bias_gelu           |x| up to 1e4: exp(-2z) overflows to inf for x << 0, the output must be -0
//   attention           q, k, v up to ±16 in bf16: scores of hundreds, a softmax close to one-hot
//                       that overflows without the max subtracted; ±4 in fp32, where an fp32 dot
//                       product's rounding at scores of hundreds alone would pass the 1e-5 bound
//                       through the softmax's sensitivity (the reference is double)
//   embedding           tokens 0 and vocab − 1 alternating, tables of magnitude 1e30
//   residual            both terms of magnitude 1e30
#include <algorithm>
#include <random>

#include "bench/lab/cases.h"
#include "core/check.h"
#include "kernels/lab/launch.cuh"
#include "kernels/lab/reference.h"
#include "layers/gpt2/sdpa_cudnn.h"

namespace laptime::lab {
namespace {

constexpr float kEps = 1e-5f;

void draw_norm_input(LabTensor& x, InputKind kind, uint32_t seed, DType dt, cudaStream_t s) {
  const bool f32 = dt == DType::F32;
  draw(x, kind, seed, 2.f, f32 ? 8.f : 8192.f, f32 ? 1.f : 256.f, s);
}

class LayerNormCase : public LabCase {
 public:
  LayerNormCase(int rows, int C, DType dt)
      : rows_i_(rows), C_(C), dt_(dt), in_(dt, int64_t{rows} * C), w_(dt, C), b_(dt, C), out_(dt, int64_t{rows} * C) {
    rows_ = rows;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    w_.fill(seed + 1, 1.f, 0.5f, s);
    b_.fill(seed + 2, 0.f, 0.5f, s);
    draw_norm_input(in_, kind, seed, dt_, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_in_ = in_.download(s);
    h_w_ = w_.download(s);
    h_b_ = b_.download(s);
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    layernorm_version(index)({out_.data(), in_.data(), w_.data(), b_.data(), rows_i_, C_, kEps, dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::layernorm_row(ref, &h_in_[static_cast<size_t>(row * C_)], h_w_.data(), h_b_.data(), C_, kEps);
  }

 private:
  int rows_i_, C_;
  DType dt_;
  LabTensor in_, w_, b_, out_;
  std::vector<float> h_in_, h_w_, h_b_;
};

class BiasGeluCase : public LabCase {
 public:
  BiasGeluCase(int rows, int C, DType dt)
      : rows_i_(rows), C_(C), dt_(dt), in_(dt, int64_t{rows} * C), b_(dt, C), out_(dt, int64_t{rows} * C) {
    rows_ = rows;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    b_.fill(seed + 1, 0.f, 0.5f, s);
    draw(in_, kind, seed, 4.f, 0.f, 1e4f, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_in_ = in_.download(s);
    h_b_ = b_.download(s);
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    bias_gelu_version(index)({out_.data(), in_.data(), b_.data(), rows_i_, C_, dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::bias_gelu_row(ref, &h_in_[static_cast<size_t>(row * C_)], h_b_.data(), C_);
  }

 private:
  int rows_i_, C_;
  DType dt_;
  LabTensor in_, b_, out_;
  std::vector<float> h_in_, h_b_;
};

class AttentionCase : public LabCase {
 public:
  AttentionCase(int B, int T, int H, int hd, DType dt)
      : B_(B),
        T_(T),
        H_(H),
        hd_(hd),
        dt_(dt),
        qkv_(dt, int64_t{B} * T * 3 * H * hd),
        out_(dt, int64_t{B} * T * H * hd) {
    rows_ = int64_t{B} * T;
    width_ = int64_t{H} * hd;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(qkv_, kind, seed, 1.f, 0.f, dt_ == DType::F32 ? 4.f : 16.f, s);
  }
  void read_inputs(cudaStream_t s) override { h_qkv_ = qkv_.download(s); }
  std::string prepare(int index, Context& ctx) override {
    if (std::string why = attention_refusal(index, dt_, hd_); !why.empty()) return why;
    if (index == 0 && !scratch_.data()) scratch_ = DeviceBuffer(attention_scratch_bytes(0, B_, T_, H_, dt_));
    if (index == 3 && !sdpa_) {
      auto sdpa = std::make_unique<CudnnSdpa>();
      std::string why;
      if (!sdpa->build(ctx, B_, T_, H_, hd_, dt_, &why)) return "cuDNN cannot run it: " + why.substr(0, why.find('\n'));
      sdpa_ = std::move(sdpa);
    }
    return "";
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    if (index == 3) return sdpa_->run(ctx, out_.data(), qkv_.data());
    AttentionArgs a{out_.data(), qkv_.data(), nullptr, nullptr, B_, T_, H_, hd_, dt_};
    if (index == 0) {
      a.scores = scratch_.as<float>();
      a.probs = scratch_.as<char>(attention_probs_offset(B_, T_, H_));
    }
    attention_version(index)(a, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::attention_row(ref, h_qkv_.data(), T_, H_, hd_, row / T_, row % T_);
  }
  // A row costs about T·C multiply-adds twice on the host: a few hundred rows at GPT-2's shape.
  int64_t max_checked_rows() const override {
    return std::max<int64_t>(16, int64_t{200'000'000} / (int64_t{T_} * width_));
  }

 private:
  int B_, T_, H_, hd_;
  DType dt_;
  LabTensor qkv_, out_;
  DeviceBuffer scratch_;             // v1's scores and probabilities
  std::unique_ptr<CudnnSdpa> sdpa_;  // v4
  std::vector<float> h_qkv_;
};

class EmbeddingCase : public LabCase {
 public:
  EmbeddingCase(int B, int T, int C, int vocab, DType dt)
      : B_(B),
        T_(T),
        C_(C),
        vocab_(vocab),
        dt_(dt),
        tokens_(DType::I32, int64_t{B} * T),
        wte_(dt, int64_t{vocab} * C),
        wpe_(dt, int64_t{T} * C),
        out_(dt, int64_t{B} * T * C) {
    rows_ = int64_t{B} * T;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    h_tokens_.assign(static_cast<size_t>(rows_), 0);
    std::mt19937 gen(seed);
    for (size_t i = 0; i < h_tokens_.size(); ++i)
      h_tokens_[i] = kind == InputKind::Random ? std::uniform_int_distribution<int32_t>(0, vocab_ - 1)(gen)
                     : kind == InputKind::Huge ? (i % 2 ? vocab_ - 1 : 0)
                                               : 0;
    tokens_.upload(h_tokens_);
    const float scale = kind == InputKind::Huge ? 1e30f : 1.f;
    wte_.fill(seed + 1, 0.f, scale, s);
    wpe_.fill(seed + 2, 0.f, scale, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_wte_ = wte_.download(s);
    h_wpe_ = wpe_.download(s);
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    embedding_version(index)(
        {out_.data(), static_cast<const int32_t*>(tokens_.data()), wte_.data(), wpe_.data(), B_, T_, C_, dt_},
        ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::embedding_row(ref, h_wte_.data(), h_wpe_.data(), h_tokens_[static_cast<size_t>(row)], row % T_, C_);
  }

 private:
  int B_, T_, C_, vocab_;
  DType dt_;
  LabTensor tokens_, wte_, wpe_, out_;
  std::vector<int32_t> h_tokens_;
  std::vector<float> h_wte_, h_wpe_;
};

class ResidualCase : public LabCase {
 public:
  ResidualCase(int64_t rows, int C, DType dt) : C_(C), dt_(dt), x_(dt, rows * C), r_(dt, rows * C), out_(dt, rows * C) {
    rows_ = rows;
    width_ = C;
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    draw(x_, kind, seed, 1.f, 0.f, 1e30f, s);
    draw(r_, kind, seed + 1, 1.f, 0.f, 1e30f, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_x_ = x_.download(s);
    h_r_ = r_.download(s);
  }
  void reset(cudaStream_t s) override { out_.poison(s); }
  void run(int index, const Context& ctx) override {
    residual_version(index)({out_.data(), x_.data(), r_.data(), x_.size(), dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override { return out_.download(s); }
  void reference(int64_t row, const std::vector<float>&, float* ref) const override {
    ref::add_row(ref, &h_x_[static_cast<size_t>(row * C_)], &h_r_[static_cast<size_t>(row * C_)], C_);
  }

 private:
  int C_;
  DType dt_;
  LabTensor x_, r_, out_;
  std::vector<float> h_x_, h_r_;
};

// Outputs row by row as [x + r | layernorm(x + r)], 2C wide.
class ResidualLayerNormCase : public LabCase {
 public:
  ResidualLayerNormCase(int rows, int C, DType dt)
      : rows_i_(rows),
        C_(C),
        dt_(dt),
        x_(dt, int64_t{rows} * C),
        r_(dt, int64_t{rows} * C),
        w_(dt, C),
        b_(dt, C),
        x_out_(dt, int64_t{rows} * C),
        y_(dt, int64_t{rows} * C) {
    rows_ = rows;
    width_ = 2 * int64_t{C};
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override {
    w_.fill(seed + 1, 1.f, 0.5f, s);
    b_.fill(seed + 2, 0.f, 0.5f, s);
    draw_norm_input(x_, kind, seed, dt_, s);
    draw(r_, kind, seed + 3, 1.f, 0.f, 1.f, s);
  }
  void read_inputs(cudaStream_t s) override {
    h_x_ = x_.download(s);
    h_r_ = r_.download(s);
    h_w_ = w_.download(s);
    h_b_ = b_.download(s);
  }
  void reset(cudaStream_t s) override {
    x_out_.poison(s);
    y_.poison(s);
  }
  void run(int index, const Context& ctx) override {
    residual_layernorm_version(index)(
        {x_out_.data(), y_.data(), x_.data(), r_.data(), w_.data(), b_.data(), rows_i_, C_, kEps, dt_}, ctx.stream());
  }
  std::vector<float> outputs(cudaStream_t s) override {
    const std::vector<float> xo = x_out_.download(s), y = y_.download(s);
    std::vector<float> out(static_cast<size_t>(rows_ * width_));
    for (int64_t r = 0; r < rows_; ++r) {
      std::copy_n(&xo[static_cast<size_t>(r * C_)], C_, &out[static_cast<size_t>(r * width_)]);
      std::copy_n(&y[static_cast<size_t>(r * C_)], C_, &out[static_cast<size_t>(r * width_ + C_)]);
    }
    return out;
  }
  void reference(int64_t row, const std::vector<float>& out, float* ref) const override {
    const size_t at = static_cast<size_t>(row * C_);
    ref::add_row(ref, &h_x_[at], &h_r_[at], C_);
    ref::layernorm_row(ref + C_, &out[static_cast<size_t>(row * width_)], h_w_.data(), h_b_.data(), C_, kEps);
  }

 private:
  int rows_i_, C_;
  DType dt_;
  LabTensor x_, r_, w_, b_, x_out_, y_;
  std::vector<float> h_x_, h_r_, h_w_, h_b_;
};

int as_int(int64_t v) { return static_cast<int>(v); }  // the registry's bounds keep these in range

}  // namespace

std::unique_ptr<LabCase> make_layernorm_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<LayerNormCase>(as_int(d[0]), as_int(d[1]), dt);
}
std::unique_ptr<LabCase> make_bias_gelu_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<BiasGeluCase>(as_int(d[0]), as_int(d[1]), dt);
}
std::unique_ptr<LabCase> make_attention_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<AttentionCase>(as_int(d[0]), as_int(d[1]), as_int(d[2]), as_int(d[3]), dt);
}
std::unique_ptr<LabCase> make_embedding_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<EmbeddingCase>(as_int(d[0]), as_int(d[1]), as_int(d[2]), as_int(d[3]), dt);
}
std::unique_ptr<LabCase> make_residual_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<ResidualCase>(d[0], as_int(d[1]), dt);
}
std::unique_ptr<LabCase> make_residual_layernorm_case(const std::vector<int64_t>& d, DType dt) {
  return std::make_unique<ResidualLayerNormCase>(as_int(d[0]), as_int(d[1]), dt);
}

}  // namespace laptime::lab
