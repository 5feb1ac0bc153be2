// CUTLASS's sm_90a GEMMs (layers/cutlass/cutlass_gemm.h), one test per kernel of the build, run
// the way the layers run them: through a Gemm plan (layers/gemm.h) whose choice is set to the
// kernel, against the CPU reference (tests/reference: double sums, the tanh GELU, e4m3 rounding
// from the format's definition). Fresh random operands each run (the seed is printed), outputs
// poisoned with NaN, shapes that are not multiples of any tile (M = 200, N = 776, K = 336) beside
// GPT-2's c_attn width, with and without the residual added in place (beta = 1, C = D), and with
// fp8 scales that are not 1, so a kernel that ignored one fails. The residual-stream kernels
// (ResNet-50's conv3: an e4m3 C and D) run directly, their C scale and D scale not 1.
//
// Bounds, from the output type (not picked by hand): a bf16 D is one rounding of an fp32 sum,
// within half a unit in its last place, 2^-9, of the exact value; 2^-8 leaves the fp32 sums'
// order and tanh.approx's error (2^-11) their room. An e4m3 D is compared with the reference
// rounded to e4m3 itself: the two differ only where the fp32 sum and the exact one fall on
// either side of a rounding boundary, one unit (2^-3) in a few elements; 2^-6 allows one in 64.
//
// Skips without a GPU and on GPUs other than compute capability 9.0 (sm_90a code runs there
// alone); a build without the kernels (sm_80, no CUTLASS headers) runs the registry's tests alone.
#include <cctype>
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/timing.h"
#include "layers/cutlass/cutlass_conv.h"
#include "layers/cutlass/cutlass_gemm.h"
#include "layers/gemm.h"
#include "tests/reference/fp8_ref.h"
#include "tests/reference/gpt2_ref.h"
#include "tests/support/compare.h"

namespace laptime {
namespace {

struct Shape {
  int M, N, K;
};
const Shape kShapes[] = {{200, 776, 336}, {384, 2304, 768}};

// Host values in [-1, 1) rounded to what the device stores: bf16, or e4m3.
std::vector<float> operand(DType t, size_t n, uint64_t seed) {
  std::vector<float> v = test::random_vec(n, seed, 0.5f);
  for (float& x : v) x = t == DType::F8E4M3 ? ref::round_e4m3(x) : ref::round_bf16(x);
  return v;
}

DeviceBuffer upload(DType t, const std::vector<float>& v) {
  if (t == DType::BF16) {
    test::DeviceArray a(DType::BF16, v);
    DeviceBuffer b(v.size() * 2);
    CUDA_CHECK(cudaMemcpy(b.data(), a.data(), b.bytes(), cudaMemcpyDeviceToDevice));
    return b;
  }
  std::vector<uint8_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = ref::e4m3_bits(v[i]);
  return test::upload_bytes(bits);
}

std::vector<float> download(DType t, const void* p, size_t n) {
  if (t == DType::BF16) return test::download_f32(DType::BF16, p, n);
  const std::vector<uint8_t> bits = test::download_bytes(p, n);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = ref::e4m3_value(bits[i]);
  return v;
}

// `run` once: directly, or (in_graph) as the first run inside a CUDA graph's capture, the launch
// parameters prepared there as a model captured before any eager pass prepares them, then the
// graph launched. Waits for the stream.
void run_once(cudaStream_t stream, const std::function<void()>& run, bool in_graph) {
  if (in_graph) {
    CudaGraph graph;
    graph.capture(stream, run);
    graph.launch(stream);
  } else {
    run();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

class CutlassGemmTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    LAPTIME_REQUIRE_GPU();
    ctx = std::make_unique<Context>();
    if (ctx->props().major != 9 || ctx->props().minor != 0)
      GTEST_SKIP() << "CUTLASS's sm_90a kernels run on compute capability 9.0 alone; this " << ctx->props().name
                   << " is " << ctx->props().major << "." << ctx->props().minor;
    kernel = cutlass_built_kernels().at(GetParam());
    seed = test::fresh_seed();
  }
  // One product through a Gemm plan set to this kernel, against the reference. `in_graph`: its
  // first run is inside a CUDA graph's capture (the launch parameters prepared there, as a model
  // captured before any eager pass does), then the graph is launched.
  void check(const Shape& sh, bool residual, bool in_graph = false);
  // The residual-stream kernels (an e4m3 C beside the e4m3 D: ResNet-50's conv3, which no Gemm
  // plan is offered), run directly: Z = x·Wᵀ + bias + c_scale · C, D = e4m3(relu(Z) · d_scale).
  void check_residual_stream(const Shape& sh, bool in_graph);

  std::unique_ptr<Context> ctx;
  const CutlassGemmKernel* kernel = nullptr;
  uint64_t seed = 0;
};

void CutlassGemmTest::check(const Shape& sh, bool residual, bool in_graph) {
  SCOPED_TRACE(kernel->name() + " M=" + std::to_string(sh.M) + " N=" + std::to_string(sh.N) +
               " K=" + std::to_string(sh.K) + (residual ? " +residual" : "") + (in_graph ? " in a graph" : "") +
               " seed " + std::to_string(seed));
  const DType ab = kernel->ab_dtype(), dt = kernel->d_dtype();
  const bool fp8 = ab == DType::F8E4M3, gelu = kernel->epilogue() == CutlassEpilogue::GeluBias,
             relu = kernel->epilogue() == CutlassEpilogue::ReluBias;
  const float s_a = fp8 ? 0.5f : 1.f, s_b = fp8 ? 0.25f : 1.f, d_scale = dt == DType::F8E4M3 ? 16.f : 1.f;
  const std::vector<float> x = operand(ab, size_t(sh.M) * sh.K, seed), w = operand(ab, size_t(sh.N) * sh.K, seed + 1),
                           bias = operand(DType::BF16, sh.N, seed + 2),
                           c = operand(DType::BF16, size_t(sh.M) * sh.N, seed + 3);
  // The reference: Z = s_a·s_b·x·Wᵀ + bias (+ C), act(Z), then for e4m3 · d_scale, rounded.
  std::vector<float> want = ref::linear(x, w, {}, sh.M, sh.K, sh.N);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = s_a * s_b * want[i] + bias[i % sh.N] + (residual ? c[i] : 0.f);
  }
  if (gelu) want = ref::gelu(want);
  if (relu)
    for (float& v : want) v = std::max(v, 0.f);
  if (dt == DType::F8E4M3)
    for (float& v : want) v = ref::round_e4m3(v * d_scale);

  const DeviceBuffer dx = upload(ab, x), dw = upload(ab, w), dbias = upload(DType::BF16, bias);
  const float h_scales[12] = {s_a, 0, 0, 0, s_b, 0, 0, 0, d_scale, 0, 0, 0};
  DeviceBuffer scales(sizeof h_scales);
  CUDA_CHECK(cudaMemcpy(scales.data(), h_scales, sizeof h_scales, cudaMemcpyHostToDevice));
  DeviceBuffer dd = residual ? upload(DType::BF16, c) : DeviceBuffer(size_t(sh.M) * sh.N * dtype_size(dt));
  if (!residual) CUDA_CHECK(cudaMemset(dd.data(), 0xff, dd.bytes()));  // NaN in bf16 and in e4m3
  CUDA_CHECK(cudaDeviceSynchronize());  // the legacy stream's copies, before the context's stream reads

  GemmSpec s;
  s.M = sh.M;
  s.N = sh.N;
  s.K = sh.K;
  s.ab_dtype = ab;
  s.d_dtype = dt;
  s.precision = fp8 ? Precision::FP8 : Precision::BF16;
  s.epilogue = gelu ? Epilogue::GeluBias : relu ? Epilogue::BiasRelu : Epilogue::Bias;
  s.fp8_fast_accum = kernel->fast_accum();  // a plan offers the kernels of its own accumulation
  if (fp8) {
    s.a_scale = scales.as<float>();
    s.b_scale = scales.as<float>() + 4;
    s.d_scale = dt == DType::F8E4M3 ? scales.as<float>() + 8 : nullptr;
  }
  Gemm g(ctx->cublaslt(), s, ctx->workspace_bytes());
  int index = -1;
  for (int i = 0; i < g.candidate_count(); ++i)
    if (g.candidate(i).cutlass == kernel) index = i;
  ASSERT_GE(index, 0) << "the plan does not offer " << kernel->name();
  g.set_choice(g.candidate(index));
  auto run = [&] { g.run(*ctx, dd.data(), dx.data(), dw.data(), dbias.data(), 1.f, residual ? 1.f : 0.f); };
  run_once(ctx->stream(), run, in_graph);
  const std::vector<float> got = download(dt, dd.data(), size_t(sh.M) * sh.N);
  EXPECT_TRUE(test::close(got, want, dt == DType::F8E4M3 ? 0x1p-6 : 0x1p-8));
}

void CutlassGemmTest::check_residual_stream(const Shape& sh, bool in_graph) {
  SCOPED_TRACE(kernel->name() + " M=" + std::to_string(sh.M) + " N=" + std::to_string(sh.N) +
               " K=" + std::to_string(sh.K) + (in_graph ? " in a graph" : "") + " seed " + std::to_string(seed));
  const DType ab = kernel->ab_dtype();
  const bool fp8 = ab == DType::F8E4M3;
  const float s_a = fp8 ? 0.5f : 1.f, s_b = fp8 ? 0.25f : 1.f, c_scale = 0.75f, d_scale = 4.f;
  const std::vector<float> x = operand(ab, size_t(sh.M) * sh.K, seed), w = operand(ab, size_t(sh.N) * sh.K, seed + 1),
                           bias = operand(DType::BF16, sh.N, seed + 2),
                           c = operand(DType::F8E4M3, size_t(sh.M) * sh.N, seed + 3);
  std::vector<float> want = ref::linear(x, w, {}, sh.M, sh.K, sh.N);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = ref::round_e4m3(std::max(s_a * s_b * want[i] + bias[i % sh.N] + c_scale * c[i], 0.f) * d_scale);
  const DeviceBuffer dx = upload(ab, x), dw = upload(ab, w), dbias = upload(DType::BF16, bias),
                     dc = upload(DType::F8E4M3, c);
  const float h_scales[16] = {c_scale, 0, 0, 0, d_scale, 0, 0, 0, s_a, 0, 0, 0, s_b, 0, 0, 0};
  DeviceBuffer scales(sizeof h_scales), dd(size_t(sh.M) * sh.N);
  CUDA_CHECK(cudaMemcpy(scales.data(), h_scales, sizeof h_scales, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dd.data(), 0xff, dd.bytes()));  // NaN in e4m3
  CUDA_CHECK(cudaDeviceSynchronize());
  CutlassGemmArgs a;
  a.M = sh.M;
  a.N = sh.N;
  a.K = sh.K;
  a.a = dx.data();
  a.b = dw.data();
  a.d = dd.data();
  a.c = dc.data();
  a.beta = 1.f;
  a.bias = dbias.data();
  a.c_scale = scales.as<float>();
  a.d_scale = scales.as<float>() + 4;
  if (fp8) {
    a.a_scale = scales.as<float>() + 8;
    a.b_scale = scales.as<float>() + 12;
  }
  ASSERT_EQ(kernel->refusal(a), "");
  CutlassLaunchCache launch;
  auto run = [&] {
    kernel->run(a, CutlassSchedule{}, launch, ctx->workspace(), ctx->workspace_bytes(), ctx->stream());
  };
  run_once(ctx->stream(), run, in_graph);
  EXPECT_TRUE(test::close(download(DType::F8E4M3, dd.data(), size_t(sh.M) * sh.N), want, 0x1p-6));
}

// cuBLASLt, which every Gemm plan is built on, has no e4m3-out algorithm at N = 776 (seen on the
// H200: "the requested functionality is not supported"); 784 is still a multiple of no tile.
const Shape kE4m3Awkward{200, 784, 336};

TEST_P(CutlassGemmTest, MatchesTheReference) {
  if (kernel->has_c() && kernel->c_dtype() == DType::F8E4M3) {
    check_residual_stream(kE4m3Awkward, true);
    check_residual_stream(kShapes[1], false);
    return;
  }
  const bool e4m3 = kernel->d_dtype() == DType::F8E4M3;
  const Shape shapes[] = {e4m3 ? kE4m3Awkward : kShapes[0], kShapes[1]};
  check(shapes[0], false, true);
  for (const Shape& sh : shapes) {
    check(sh, false);
    if (kernel->d_dtype() == DType::BF16 && kernel->epilogue() == CutlassEpilogue::Bias) check(sh, true);
  }
}

// "bf16_128x256x64_cluster_2x1_cooperative_GELU_bias_bf16": the name, one '_' between words.
std::string kernel_label(const ::testing::TestParamInfo<int>& info) {
  std::string label;
  for (char ch : cutlass_built_kernels().at(info.param)->name()) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      label += ch;
    else if (!label.empty() && label.back() != '_')
      label += '_';
  }
  while (!label.empty() && label.back() == '_') label.pop_back();
  return label;
}

INSTANTIATE_TEST_SUITE_P(EachKernel, CutlassGemmTest,
                         ::testing::Range(0, static_cast<int>(cutlass_built_kernels().size())), kernel_label);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CutlassGemmTest);

// The registry's rules, on any machine: a GPU other than 9.0 is offered nothing.
TEST(CutlassRegistry, OffersKernelsOnComputeCapability90Alone) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  const bool hopper = ctx.props().major == 9 && ctx.props().minor == 0;
  EXPECT_EQ(cutlass_gemm_kernels(ctx.device()).size(), hopper ? cutlass_built_kernels().size() : 0u);
}

// One launch cache through which a plan times several kernels (Gemm::autotune): a kernel never
// launches the parameters another prepared, even for the same arguments and schedule (the H200 hung
// on a TMA barrier when it did). Two kernels of one kind, the same operands, both answers alike.
TEST(CutlassRegistry, ALaunchCacheIsPreparedAgainForAnotherKernel) {
  LAPTIME_REQUIRE_GPU();
  Context ctx;
  std::vector<const CutlassGemmKernel*> bias;
  for (const CutlassGemmKernel* k : cutlass_gemm_kernels(ctx.device()))
    if (k->ab_dtype() == DType::BF16 && k->d_dtype() == DType::BF16 && k->epilogue() == CutlassEpilogue::Bias)
      bias.push_back(k);
  if (bias.size() < 2) GTEST_SKIP() << "fewer than two bf16 bias kernels offered here (not a 9.0 GPU, or not built)";
  const int M = 256, N = 512, K = 256;
  const std::vector<float> x = operand(DType::BF16, size_t(M) * K, 1), w = operand(DType::BF16, size_t(N) * K, 2);
  const DeviceBuffer dx = upload(DType::BF16, x), dw = upload(DType::BF16, w);
  DeviceBuffer d(size_t(M) * N * 2);
  CUDA_CHECK(cudaDeviceSynchronize());
  CutlassGemmArgs a;  // the same arguments for both: only the owner tells the cache apart
  a.M = M;
  a.N = N;
  a.K = K;
  a.a = dx.data();
  a.b = dw.data();
  a.d = d.data();
  CutlassLaunchCache cache;
  std::vector<float> out[2];
  for (int i = 0; i < 2; ++i) {
    CUDA_CHECK(cudaMemsetAsync(a.d, 0xff, size_t(M) * N * 2, ctx.stream()));
    bias[i]->run(a, CutlassSchedule{}, cache, ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
    EXPECT_EQ(cache.owner, bias[i]) << bias[i]->name();
    out[i] = download(DType::BF16, a.d, size_t(M) * N);
  }
  EXPECT_TRUE(test::close(out[1], out[0], 0x1p-8));
}

// A schedule is named in the plan lines; every one that is tried has a name of its own.
TEST(CutlassRegistry, SchedulesHaveDistinctNames) {
  const std::vector<CutlassSchedule> s = cutlass_schedules();
  ASSERT_FALSE(s.empty());
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = i + 1; j < s.size(); ++j) EXPECT_NE(schedule_name(s[i]), schedule_name(s[j]));
}

// A kernel is named in the plan lines and the test labels; tiles that differ only in their
// epilogue subtile, stage count or blocks an SM must say so (the plan line is how a reader tells
// which one a layer ran). Host-only: names need no GPU.
TEST(CutlassRegistry, KernelsHaveDistinctNames) {
  std::vector<std::string> names;
  for (const CutlassGemmKernel* k : cutlass_built_kernels()) names.push_back(k->name());
  for (const CutlassConvKernel* k : cutlass_built_conv_kernels()) names.push_back(k->name());
  if (names.empty())
    GTEST_SKIP() << "no CUTLASS kernels in this build (no sm_90 in CMAKE_CUDA_ARCHITECTURES, or no headers)";
  std::sort(names.begin(), names.end());
  const auto twin = std::adjacent_find(names.begin(), names.end());
  const std::string shared = twin == names.end() ? "" : *twin;
  EXPECT_EQ(shared, "") << "two built CUTLASS kernels share this name";
}

}  // namespace
}  // namespace laptime
