// Every version of every kernel of laptime lab (kernels/lab/registry.h) against the CPU
// reference on the GPU, through the lab's own cases (bench/lab/case.h: outputs poisoned before
// each call, the registry's bound): on shapes drawn at random from each dimension's test range,
// and on the odd shapes with zeros and huge values. Then the --kernel swap-in: GPT-2 with each
// version of layernorm, attention and embedding, and with a learner's LayerNorm file
// (--kernel layernorm=FILE.cu), against the CPU oracle of the whole model, and the max pool layer
// with each of its versions. Without a GPU every test here skips, saying why.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "bench/lab/case.h"
#include "bench/lab/kernel_files.h"
#include "bench/lab/measure.h"
#include "kernels/convert.cuh"
#include "kernels/lab/reference.h"
#include "layers/resnet50/pooling.h"
#include "models/gpt2.h"
#include "tests/reference/gpt2_ref.h"
#include "tests/support/compare.h"

namespace laptime::lab {
namespace {

using Param = std::tuple<std::string, std::string>;  // kernel, precision

std::vector<Param> all_kernels() {
  std::vector<Param> v;
  for (const KernelInfo& k : kernels())
    for (const std::string& p : k.precisions) v.emplace_back(k.name, p);
  return v;
}

// A shape drawn from each dimension's test range, redrawn until the kernel can run it.
Shape random_shape(const KernelInfo& k, std::mt19937_64& gen) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    Shape s{"random", {}};
    for (const Dim& d : k.dims) s.dims.push_back(std::uniform_int_distribution<int64_t>(d.test_min, d.test_max)(gen));
    if (!k.shape_error || k.shape_error(s.dims).empty()) return s;
  }
  throw Error("internal: no valid random shape for " + k.name);
}

class LabKernels : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    seed = test::fresh_seed();
    ctx = std::make_unique<Context>();
  }
  uint64_t seed = 0;
  std::unique_ptr<Context> ctx;
};

// Each version that runs `shape` passes its check on every kind in `kinds`.
void check_all_versions(const KernelInfo& k, const std::string& precision, const Shape& shape,
                        std::initializer_list<InputKind> kinds, Context& ctx, uint64_t seed) {
  std::unique_ptr<LabCase> c = make_case(k, shape, precision);
  for (InputKind kind : kinds) {
    c->set_inputs(kind, static_cast<uint32_t>(seed), ctx.stream());
    for (size_t v = 0; v < k.versions.size(); ++v) {
      if (!k.runs_in(k.versions[v], precision)) continue;
      const std::string why = c->prepare(static_cast<int>(v), ctx);
      SCOPED_TRACE(::testing::Message() << k.versions[v].id << " at " << shape_text(k, shape.dims) << " ("
                                        << shape.label << "), " << input_kind_name(kind) << " inputs, seed " << seed);
      if (!why.empty()) continue;  // n/a here: the lab reports it as such
      const CheckRow row = check_version(*c, static_cast<int>(v), ctx, k.bound_of(static_cast<int>(v), precision), seed,
                                         k.floor_of(static_cast<int>(v), precision));
      EXPECT_TRUE(row.passed) << "rel error " << row.rel_error << " > " << row.bound << ": " << row.detail;
    }
  }
}

TEST_P(LabKernels, EveryVersionOnRandomShapes) {
  const auto& [name, precision] = GetParam();
  const KernelInfo& k = *find_kernel(name);
  std::mt19937_64 gen(seed);
  for (int i = 0; i < 3; ++i)
    check_all_versions(k, precision, random_shape(k, gen), {InputKind::Random}, *ctx, seed + i);
}

TEST_P(LabKernels, EveryVersionOnOddShapesZerosAndHugeValues) {
  const auto& [name, precision] = GetParam();
  const KernelInfo& k = *find_kernel(name);
  for (const Shape& s : k.odd_shapes)
    check_all_versions(k, precision, s, {InputKind::Random, InputKind::Zeros, InputKind::Huge}, *ctx, seed);
}

// The check itself: a "version" that launches nothing must fail it (its outputs keep their
// poison, or for the in-place epilogue and the zeroed amax, values that are not the op's).
class DoesNothing : public LabCase {
 public:
  explicit DoesNothing(std::unique_ptr<LabCase> real) : real_(std::move(real)) {
    rows_ = real_->rows();
    width_ = real_->row_width();
  }
  void draw_inputs(InputKind kind, uint32_t seed, cudaStream_t s) override { real_->draw_inputs(kind, seed, s); }
  void read_inputs(cudaStream_t s) override { real_->read_inputs(s); }
  void reset(cudaStream_t s) override { real_->reset(s); }
  void run(int, const Context&) override {}
  std::vector<float> outputs(cudaStream_t s) override { return real_->outputs(s); }
  void reference(int64_t row, const std::vector<float>& out, float* ref) const override {
    real_->reference(row, out, ref);
  }

 private:
  std::unique_ptr<LabCase> real_;
};

TEST_P(LabKernels, AVersionThatWritesNothingFails) {
  const auto& [name, precision] = GetParam();
  const KernelInfo& k = *find_kernel(name);
  DoesNothing c(make_case(k, k.odd_shapes.back(), precision));
  c.set_inputs(InputKind::Random, static_cast<uint32_t>(seed), ctx->stream());
  const CheckRow row = check_version(c, 0, *ctx, k.tolerance.at(precision), seed);
  EXPECT_FALSE(row.passed) << "seed " << seed << ": " << row.rel_error;
}

INSTANTIATE_TEST_SUITE_P(All, LabKernels, ::testing::ValuesIn(all_kernels()),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// --- the swap-in ------------------------------------------------------------------------------

class LabSwapIn : public test::PrecisionTest {};

// GPT-2 (3 blocks, C = 128, 2 heads of 64) with each version of each kernel it can swap, against
// the CPU oracle of the whole model, as the model tests hold the production build.
TEST_P(LabSwapIn, Gpt2WithEveryVersion) {
  GPT2Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 128;
  c.vocab_size = 301;
  c.n_ctx = 64;
  const HostWeights hw = random_gpt2_weights(c, seed);
  const int B = 3, T = 29;
  std::mt19937 gen(static_cast<uint32_t>(seed));
  std::vector<int32_t> tokens(B * T);
  for (int32_t& t : tokens) t = std::uniform_int_distribution<int32_t>(0, c.vocab_size - 1)(gen);
  const std::vector<float> want =
      laptime::ref::gpt2(tokens, hw, c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.layer_norm_epsilon, B, T);
  const std::string p = precision_name(precision());
  for (const char* name : {"layernorm", "attention", "embedding"}) {
    const KernelInfo& k = *find_kernel(name);
    for (size_t v = 0; v < k.versions.size(); ++v) {
      KernelChoice choice{{name, static_cast<int>(v)}};
      if (!check_kernel_choice(choice, "gpt2", p).empty()) continue;
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " --kernel " << kernel_choice_text(choice));
      GPT2Config cv = c;
      cv.kernels = choice;
      GPT2 model(*ctx, cv, hw, precision(), B, T);
      model.upload_tokens(*ctx, tokens, B, T);
      fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(B) * T * model.logits_row_stride(), ctx->stream());
      model.forward(*ctx, B, T);
      EXPECT_TRUE(test::close(model.logits_to_host(*ctx, B, T), want, precision() == Precision::FP32 ? 1e-4 : bound()));
    }
  }
  // --kernel layernorm=FILE.cu: the worked example's v2, checked at the model's shape, then in
  // every LayerNorm; a wrong file refused there with its worst element.
  const std::string examples = std::string(LAPTIME_SOURCE_DIR) + "/kernels/lab/examples/";
  const std::map<std::string, std::vector<int64_t>> shapes{{"layernorm", {B * T, c.n_embd}}};
  GPT2Config cf = c;
  cf.kernels = load_kernel_files(*ctx, {}, {{"layernorm", examples + "layernorm_v2.cu"}}, shapes, "gpt2", precision());
  ASSERT_NE(user_version_info("layernorm", cf.kernels.at("layernorm")), nullptr);
  GPT2 model(*ctx, cf, hw, precision(), B, T);
  model.upload_tokens(*ctx, tokens, B, T);
  fill_nan(model.dtype(), model.logits(), static_cast<int64_t>(B) * T * model.logits_row_stride(), ctx->stream());
  model.forward(*ctx, B, T);
  EXPECT_TRUE(test::close(model.logits_to_host(*ctx, B, T), want, precision() == Precision::FP32 ? 1e-4 : bound()))
      << "--kernel layernorm=layernorm_v2.cu, seed " << seed;
  try {
    load_kernel_files(*ctx, {}, {{"layernorm", examples + "wrong/layernorm_race.cu"}}, shapes, "gpt2", precision());
    ADD_FAILURE() << "a wrong file was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is wrong at rows=87 C=128 (gpt2's shape)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("worst ["), std::string::npos) << e.what();
  }
}

// The max pool layer with each version, against the reference, on an odd image.
TEST_P(LabSwapIn, MaxPoolLayerWithEveryVersion) {
  const int N = 2, H = 13, W = 11, C = 64, Ho = MaxPool::out_size(H), Wo = MaxPool::out_size(W);
  const std::vector<float> x = test::random_vec(static_cast<size_t>(N) * H * W * C, seed);
  test::DeviceArray dx(dtype(), x), dy(dtype(), static_cast<size_t>(N) * Ho * Wo * C);
  const std::vector<float> xs = dx.download();  // as stored
  std::vector<float> want(dy.size());
  for (int n = 0; n < N; ++n)
    for (int ho = 0; ho < Ho; ++ho)
      for (int wo = 0; wo < Wo; ++wo)
        ref::maxpool_pixel(&want[((n * Ho + ho) * Wo + wo) * C], xs.data(), H, W, C, n, ho, wo);
  for (int v = 0; v < 3; ++v) {
    SCOPED_TRACE(::testing::Message() << "maxpool v" << v + 1);
    const MaxPool pool("maxpool", dtype(), {{"maxpool", v}});
    dy.poison();
    pool.forward(*ctx, dy.data(), dx.data(), N, H, W, C);
    EXPECT_TRUE(test::close(dy.download(), want, 0.0));  // a max is exact
  }
}

// The global average pool with each version, against the reference: the vector path (C = 64)
// and the general one (C = 12), an odd image.
TEST_P(LabSwapIn, AvgPoolLayerWithEveryVersion) {
  for (const int C : {64, 12}) {
    const int N = 3, H = 5, W = 7;
    const std::vector<float> x = test::random_vec(static_cast<size_t>(N) * H * W * C, seed + C);
    test::DeviceArray dx(dtype(), x), dy(dtype(), static_cast<size_t>(N) * C);
    const std::vector<float> xs = dx.download();  // as stored
    std::vector<float> want(dy.size());
    for (int n = 0; n < N; ++n) ref::avgpool_image(&want[static_cast<size_t>(n) * C], xs.data(), H * W, C, n);
    for (int v = 0; v < 3; ++v) {
      SCOPED_TRACE(::testing::Message() << "avgpool v" << v + 1 << " C=" << C);
      const GlobalAvgPool pool("avgpool", dtype(), {{"avgpool", v}});
      dy.poison();
      pool.forward(*ctx, dy.data(), dx.data(), N, H, W, C);
      EXPECT_TRUE(test::close(dy.download(), want, precision() == Precision::FP32 ? 1e-6 : 8e-3));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(, LabSwapIn, ::testing::Values(Precision::FP32, Precision::BF16),
                         [](const auto& info) { return std::string(precision_name(info.param)); });

}  // namespace
}  // namespace laptime::lab
