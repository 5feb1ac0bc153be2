// laptime_fp8_shapes: ResNet-50's convolution shapes at batch 256 (or argv[1]) in bf16 and fp8,
// each timed alone on the GPU, to decide which of them fp8 can speed up. A development bench
// between the unit tests and the model (docs/DESIGN-NOTES.md, "Development benches"); it prints one
// table and checks nothing beyond each library's own status.
//
//   1×1 stride-1 convolutions, as the GEMMs y[N·H·W, Cout] = x[N·H·W, Cin] · Wᵀ (cuBLASLt):
//     bf16 in, bf16 out, bias + ReLU (+ the bf16 residual as beta·C for conv3): what runs now;
//     e4m3 in, bf16 out; e4m3 in, e4m3 out (the residual, when there is one, still bf16 as C);
//     and the quantize pass that makes e4m3 x from bf16 x, which a layer whose producer writes
//     bf16 pays before its fp8 GEMM.
//   Every convolution through cuDNN's graph: conv → bias [→ + residual] → ReLU in bf16 (what the
//     3×3 ones run now), and conv on e4m3 x and w → · descale_x · descale_w → + bias [→ + e4m3
//     residual · its descale] → ReLU → · scale_y → e4m3 y (and → bf16 y): whether cuDNN 9 builds
//     fp8 plans for these graphs on this GPU, and their times. An e4m3 residual is what an
//     all-fp8 activation stream needs (cuBLASLt takes no fp8 C).
// Times: GPU milliseconds per run (core/timing.h's time_candidate), on random operands.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <cudnn_frontend.h>

#include "core/buffer.h"
#include "core/check.h"
#include "core/context.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"
#include "layers/gemm.h"
#include "layers/linear.h"

namespace laptime {
namespace {
namespace fe = cudnn_frontend;

// GPU milliseconds per run, timed the one way laptime times candidates (core/timing.h).
float time_ms(cudaStream_t s, const std::function<void()>& run) {
  return time_candidate(s, [&] {
    run();
    return true;
  });
}

struct Shape {
  const char* name;
  int side, cin, cout, kernel, stride;
  bool residual;  // conv3: adds the block's shortcut
};

// The distinct convolutions of ResNet-50 at 224 (torchvision v1.5), by input side.
const Shape kShapes[] = {
    {"layer1 conv1 (block 0)", 56, 64, 64, 1, 1, false},
    {"layer1 conv1", 56, 256, 64, 1, 1, false},
    {"layer1 conv3", 56, 64, 256, 1, 1, true},
    {"layer1 downsample", 56, 64, 256, 1, 1, false},
    {"layer2 conv1 (block 0)", 56, 256, 128, 1, 1, false},
    {"layer2 conv1", 28, 512, 128, 1, 1, false},
    {"layer2 conv3", 28, 128, 512, 1, 1, true},
    {"layer3 conv1 (block 0)", 28, 512, 256, 1, 1, false},
    {"layer3 conv1", 14, 1024, 256, 1, 1, false},
    {"layer3 conv3", 14, 256, 1024, 1, 1, true},
    {"layer4 conv1 (block 0)", 14, 1024, 512, 1, 1, false},
    {"layer4 conv1", 7, 2048, 512, 1, 1, false},
    {"layer4 conv3", 7, 512, 2048, 1, 1, true},
    {"layer1 conv2", 56, 64, 64, 3, 1, false},
    {"layer2 conv2 (stride 2)", 56, 128, 128, 3, 2, false},
    {"layer2 conv2", 28, 128, 128, 3, 1, false},
    {"layer3 conv2 (stride 2)", 28, 256, 256, 3, 2, false},
    {"layer3 conv2", 14, 256, 256, 3, 1, false},
    {"layer4 conv2 (stride 2)", 14, 512, 512, 3, 2, false},
    {"layer4 conv2", 7, 512, 512, 3, 1, false},
    {"layer2 downsample (s2)", 56, 256, 512, 1, 2, false},
    {"layer3 downsample (s2)", 28, 512, 1024, 1, 2, false},
    {"layer4 downsample (s2)", 14, 1024, 2048, 1, 2, false},
};

std::string gemm_row(Context& ctx, const Shape& s, int N, DeviceBuffer& pool) {
  const int out_side = s.side;  // stride 1
  const int64_t M = int64_t{N} * out_side * out_side;
  const std::size_t need =
      std::size_t(M) * (s.cin * 3 + s.cout * 6) + std::size_t(s.cin) * s.cout * 3 + s.cout * 2 + 4096;
  if (pool.bytes() < need) pool = DeviceBuffer(need);
  char* p = pool.as<char>();
  ArenaLayout l;
  char* x16 = p + l.reserve(std::size_t(M) * s.cin * 2);
  char* x8 = p + l.reserve(std::size_t(M) * s.cin);
  char* w16 = p + l.reserve(std::size_t(s.cin) * s.cout * 2);
  char* w8 = p + l.reserve(std::size_t(s.cin) * s.cout);
  char* bias = p + l.reserve(std::size_t(s.cout) * 2);
  char* y16 = p + l.reserve(std::size_t(M) * s.cout * 2);
  char* y8 = p + l.reserve(std::size_t(M) * s.cout);
  char* res = p + l.reserve(std::size_t(M) * s.cout * 2);
  float* one = reinterpret_cast<float*>(p + l.reserve(16));
  const cudaStream_t st = ctx.stream();
  fill_uniform(DType::BF16, x16, M * s.cin, 1, st);
  fill_uniform(DType::F8E4M3, x8, M * s.cin, 2, st);
  fill_uniform(DType::BF16, w16, int64_t{s.cin} * s.cout, 3, st);
  fill_uniform(DType::F8E4M3, w8, int64_t{s.cin} * s.cout, 4, st);
  fill_uniform(DType::BF16, bias, s.cout, 5, st);
  fill_uniform(DType::BF16, res, M * s.cout, 6, st);
  const float h_one = 1.f;
  CUDA_CHECK(cudaMemcpyAsync(one, &h_one, sizeof h_one, cudaMemcpyHostToDevice, st));
  CUDA_CHECK(cudaStreamSynchronize(st));  // h_one is read by the copy
  GemmSpec g;
  g.M = static_cast<int>(M);
  g.N = s.cout;
  g.K = s.cin;
  g.b_layout = BLayout::NK;
  g.precision = Precision::FP8;
  g.epilogue = Epilogue::BiasRelu;
  const float beta = s.residual ? 1.f : 0.f;
  char out[400];
  auto run = [&](DType ab, DType d, void* y, const void* x, const void* w) -> float {
    GemmSpec h = g;
    h.ab_dtype = ab;
    h.d_dtype = d;
    if (ab == DType::F8E4M3) h.a_scale = h.b_scale = h.d_scale = one;
    try {
      const Gemm gemm(ctx.cublaslt(), h, ctx.workspace_bytes());
      return time_ms(st, [&] { gemm.run(ctx, y, x, w, bias, 1.f, beta, s.residual ? res : nullptr); });
    } catch (const Error&) {
      return -1.f;
    }
  };
  const float t16 = run(DType::BF16, DType::BF16, y16, x16, w16);
  const float t8 = run(DType::F8E4M3, DType::BF16, y16, x8, w8);
  const float t88 = run(DType::F8E4M3, DType::F8E4M3, y8, x8, w8);
  // What a layer whose input arrives in bf16 pays first (Conv2d's fp8 candidate times both).
  const float tq = time_ms(st, [&] { quantize_fp8(x8, one, DType::BF16, x16, M * s.cin, st); });
  // bf16's bytes: x read, y written, the residual read.
  const double mb16 = double(M) * (s.cin + s.cout * (s.residual ? 2 : 1)) * 2 / 1e6;
  std::snprintf(out, sizeof out,
                "%-26s 1x1 M=%7lld K=%4d N=%4d%s  bf16 %8.1f us  fp8->bf16 %8.1f us  fp8->fp8 %8.1f us  "
                "quantize x %6.1f us  (bf16 moves %.0f MB)",
                s.name, static_cast<long long>(M), s.cin, s.cout, s.residual ? " +res" : "     ", t16 * 1e3, t8 * 1e3,
                t88 * 1e3, tq * 1e3, mb16);
  return out;
}

// One cuDNN graph of a 3×3 convolution; fp8: e4m3 x and w with their descales, y of `y_type`
// (e4m3 through · scale_y, or bf16). Returns the time per run or a negative value, and in *why
// cuDNN's words when it has no plan.
float conv_time(Context& ctx, const Shape& s, int N, bool fp8, fe::DataType_t y_type, DeviceBuffer& pool,
                std::string* why) {
  why->clear();
  const int64_t C = s.cin, K = s.cout, H = s.side, R = s.kernel;
  const int64_t Ho = (H + 2 * (R / 2) - R) / s.stride + 1;
  const std::size_t need =
      std::size_t(N) * H * H * C * 2 + std::size_t(N) * Ho * Ho * K * 4 + std::size_t(K) * C * R * R * 2 + K * 2 + 8192;
  if (pool.bytes() < need) pool = DeviceBuffer(need);
  ArenaLayout l;
  char* p = pool.as<char>();
  char* x = p + l.reserve(std::size_t(N) * H * H * C * 2);
  char* y = p + l.reserve(std::size_t(N) * Ho * Ho * K * 2);
  char* w = p + l.reserve(std::size_t(K) * C * R * R * 2);
  char* bias = p + l.reserve(std::size_t(K) * 2);
  char* res = p + l.reserve(std::size_t(N) * Ho * Ho * K * 2);
  float* scales = reinterpret_cast<float*>(p + l.reserve(64));
  const DType io = fp8 ? DType::F8E4M3 : DType::BF16;
  fill_uniform(io, x, int64_t{N} * H * H * C, 1, ctx.stream());
  fill_uniform(io, w, K * C * R * R, 2, ctx.stream());
  fill_uniform(DType::BF16, bias, K, 3, ctx.stream());
  fill_uniform(io, res, int64_t{N} * Ho * Ho * K, 4, ctx.stream());
  const float h_scales[4] = {1.f, 1.f, 1.f, 1.f};
  CUDA_CHECK(cudaMemcpyAsync(scales, h_scales, sizeof h_scales, cudaMemcpyHostToDevice, ctx.stream()));
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));  // h_scales is read by the copy

  using T = fe::graph::Tensor_attributes;
  using PW = fe::graph::Pointwise_attributes;
  fe::graph::Graph g;
  g.set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const fe::DataType_t in_type = fp8 ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16;
  auto tx = g.tensor(
      T().set_name("x").set_uid(1).set_dim({N, C, H, H}).set_stride({H * H * C, 1, H * C, C}).set_data_type(in_type));
  auto tw = g.tensor(
      T().set_name("w").set_uid(2).set_dim({K, C, R, R}).set_stride({R * R * C, 1, R * C, C}).set_data_type(in_type));
  auto t = g.conv_fprop(tx, tw,
                        fe::graph::Conv_fprop_attributes()
                            .set_padding({R / 2, R / 2})
                            .set_stride({s.stride, s.stride})
                            .set_dilation({1, 1}));
  std::unordered_map<int64_t, void*> pack{{1, x}, {2, w}, {3, bias}, {9, y}};
  auto scalar = [&](const char* name, int64_t uid) {
    return g.tensor(T().set_name(name)
                        .set_uid(uid)
                        .set_dim({1, 1, 1, 1})
                        .set_stride({1, 1, 1, 1})
                        .set_data_type(fe::DataType_t::FLOAT));
  };
  if (fp8) {
    t = g.pointwise(t, scalar("descale_x", 4), PW().set_mode(fe::PointwiseMode_t::MUL));
    t = g.pointwise(t, scalar("descale_w", 5), PW().set_mode(fe::PointwiseMode_t::MUL));
    pack[4] = scales;
    pack[5] = scales + 1;
  }
  auto tb = g.tensor(T().set_name("bias")
                         .set_uid(3)
                         .set_dim({1, K, 1, 1})
                         .set_stride({K, 1, K, K})
                         .set_data_type(fe::DataType_t::BFLOAT16));
  t = g.pointwise(t, tb, PW().set_mode(fe::PointwiseMode_t::ADD));
  if (s.residual) {
    auto tz = g.tensor(T().set_name("z")
                           .set_uid(7)
                           .set_dim({N, K, Ho, Ho})
                           .set_stride({Ho * Ho * K, 1, Ho * K, K})
                           .set_data_type(in_type));
    pack[7] = res;
    if (fp8) {
      tz = g.pointwise(tz, scalar("descale_z", 8), PW().set_mode(fe::PointwiseMode_t::MUL));
      pack[8] = scales + 3;
    }
    t = g.pointwise(t, tz, PW().set_mode(fe::PointwiseMode_t::ADD));
  }
  t = g.pointwise(t, PW().set_mode(fe::PointwiseMode_t::RELU_FWD));
  if (fp8 && y_type == fe::DataType_t::FP8_E4M3) {
    t = g.pointwise(t, scalar("scale_y", 6), PW().set_mode(fe::PointwiseMode_t::MUL));
    pack[6] = scales + 2;
  }
  t->set_output(true)
      .set_name("y")
      .set_uid(9)
      .set_data_type(y_type)
      .set_dim({N, K, Ho, Ho})
      .set_stride({Ho * Ho * K, 1, Ho * K, K});
  fe::error_t e = g.validate();
  if (e.is_good()) e = g.build_operation_graph(ctx.cudnn());
  if (e.is_good()) e = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (e.is_good()) e = g.check_support(ctx.cudnn());
  if (e.is_good()) e = g.build_plans(ctx.cudnn(), fe::BuildPlanPolicy_t::HEURISTICS_CHOICE);
  int64_t ws = 0;
  if (e.is_good()) e = g.get_workspace_size(ws);
  if (e.is_bad()) {
    *why = e.get_message().substr(0, 120);
    return -1.f;
  }
  ctx.reserve_workspace(static_cast<std::size_t>(ws));
  bool ok = true;
  const float ms = time_ms(ctx.stream(), [&] { ok = ok && g.execute(ctx.cudnn(), pack, ctx.workspace()).is_good(); });
  if (!ok) *why = "execute failed";
  return ok ? ms : -1.f;
}

int run(int N) {
  Context ctx;
  const std::string why = fp8_refusal(ctx);
  if (!why.empty()) {
    std::fprintf(stderr, "laptime_fp8_shapes: %s\n", why.c_str());
    return 1;
  }
  std::printf("ResNet-50 convolution shapes at batch %d on %s (GPU time per run)\n", N, ctx.props().name);
  DeviceBuffer pool;
  for (const Shape& s : kShapes)
    if (s.kernel == 1 && s.stride == 1) std::printf("%s\n", gemm_row(ctx, s, N, pool).c_str());
  std::printf("cuDNN graphs (conv, bias, [residual,] ReLU; fp8: descales and y's scale in the graph)\n");
  for (const Shape& s : kShapes) {
    std::string w16, w8, w8b;
    const float t16 = conv_time(ctx, s, N, false, fe::DataType_t::BFLOAT16, pool, &w16);
    const float t8 = conv_time(ctx, s, N, true, fe::DataType_t::FP8_E4M3, pool, &w8);
    const float t8b = conv_time(ctx, s, N, true, fe::DataType_t::BFLOAT16, pool, &w8b);
    std::printf("%-26s %dx%d side %3d C=%4d K=%4d s%d%s  bf16 %8.1f us  fp8->fp8 %8.1f us  fp8->bf16 %8.1f us%s%s%s\n",
                s.name, s.kernel, s.kernel, s.side, s.cin, s.cout, s.stride, s.residual ? " +res" : "     ", t16 * 1e3,
                t8 * 1e3, t8b * 1e3, w16.empty() ? "" : ("  [bf16: " + w16 + "]").c_str(),
                w8.empty() ? "" : ("  [fp8: " + w8 + "]").c_str(),
                w8b.empty() ? "" : ("  [fp8->bf16: " + w8b + "]").c_str());
  }
  return 0;
}

}  // namespace
}  // namespace laptime

int main(int argc, char** argv) {
  try {
    return laptime::run(argc > 1 ? std::atoi(argv[1]) : 256);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laptime_fp8_shapes: %s\n", e.what());
    return 1;
  }
}
