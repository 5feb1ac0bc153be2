// laptime_sdpa_probe: cuDNN's fp8 attention (layers/gpt2/sdpa_cudnn.h, CudnnSdpaFp8) beside
// the bf16 one GPT-2 runs today, at GPT-2 small's attention (12 heads of 64, causal) for each
// B×T asked: does it build, how far is it from bf16, how fast is it. The measurement before any
// model uses it (docs/DESIGN-NOTES.md, "Measure first"). A development bench, not installed.
//
//   data   qkv [B, T, 3C] uniform in [-2, 2) (fresh per shape, seeded), bf16; its e4m3 copy at
//          s = amax / 448, the output's scale the same s (|heads| ≤ max |v|: each head is a convex
//          combination of v's rows, so the output cannot leave the range)
//   check  rel L2 of the fp8 core's dequantized output against the bf16 core's, beside the floor
//          any e4m3 output has: the bf16 output itself rounded to e4m3 at s and back
//   time   core/timing.h's time_candidate (a CUDA graph of repeated runs, the GPU's time)
//
// Usage: laptime_sdpa_probe [--shapes 8x1024,1x1024]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/check.h"
#include "core/context.h"
#include "core/timing.h"
#include "kernels/fp8.cuh"
#include "layers/gpt2/sdpa_cudnn.h"

namespace laptime {
namespace {

constexpr int kHeads = 12, kHeadDim = 64;

std::vector<float> bf16_to_host(const void* d, int64_t n) {
  std::vector<uint16_t> raw(static_cast<size_t>(n));
  CUDA_CHECK(cudaMemcpy(raw.data(), d, raw.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const uint32_t bits = uint32_t{raw[i]} << 16;
    std::memcpy(&out[i], &bits, 4);
  }
  return out;
}

std::vector<float> f32_to_host(const void* d, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  CUDA_CHECK(cudaMemcpy(out.data(), d, out.size() * 4, cudaMemcpyDeviceToHost));
  return out;
}

double rel_l2(const std::vector<float>& x, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return NAN;
    num += (double(x[i]) - ref[i]) * (double(x[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

int probe(Context& ctx, int B, int T, uint32_t seed) {
  const cudaStream_t st = ctx.stream();
  const int64_t C = int64_t{kHeads} * kHeadDim, n_in = int64_t{B} * T * 3 * C, n_out = int64_t{B} * T * C;
  DeviceBuffer qkv(n_in * 2), qkv8(n_in), out16(n_out * 2), out8(n_out), ref8(n_out), deq(n_out * 4), scalars(3 * 4);
  fill_uniform(DType::BF16, qkv.data(), n_in, seed, 0.f, 2.f, st);  // [-2, 2)
  float* amax = static_cast<float*>(scalars.data());
  CUDA_CHECK(cudaMemsetAsync(amax, 0, 4, st));
  amax_forward(amax, DType::BF16, qkv.data(), n_in, st);
  float host_amax = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host_amax, amax, 4, cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
  const float s[2] = {host_amax / 448.f, 448.f / host_amax};  // scale, inverse scale
  float* scale = amax + 1;
  CUDA_CHECK(cudaMemcpyAsync(scale, s, sizeof(s), cudaMemcpyHostToDevice, st));
  quantize_fp8(qkv8.data(), scale + 1, DType::BF16, qkv.data(), n_in, st);

  CudnnSdpa bf16;
  CudnnSdpaFp8 fp8;
  std::string why16, why8;
  const bool ok16 = bf16.build(ctx, B, T, kHeads, kHeadDim, DType::BF16, &why16);
  const bool ok8 = fp8.build(ctx, B, T, kHeads, kHeadDim, &why8);
  std::printf("B=%d T=%d H=%d hd=%d (causal): amax %.3f\n", B, T, kHeads, kHeadDim, host_amax);
  if (!ok16) std::printf("  bf16: cuDNN refuses: %s\n", why16.c_str());
  if (!ok8) std::printf("  fp8:  cuDNN refuses: %s\n", why8.c_str());
  if (!ok16 || !ok8) return ok8 ? 1 : 0;  // a refusal of fp8 is a finding, not a failure
  std::printf("  bf16 engine %s\n  fp8  engine %s\n", bf16.engine().c_str(), fp8.engine().c_str());

  bf16.run(ctx, out16.data(), qkv.data());
  fp8.run(ctx, out8.data(), qkv8.data(), scale, scale + 1);
  dequantize_fp8(static_cast<float*>(deq.data()), out8.data(), scale, n_out, st);
  const std::vector<float> want = bf16_to_host(out16.data(), n_out), got = f32_to_host(deq.data(), n_out);
  quantize_fp8(ref8.data(), scale + 1, DType::BF16, out16.data(), n_out, st);  // the e4m3 output's own floor
  dequantize_fp8(static_cast<float*>(deq.data()), ref8.data(), scale, n_out, st);
  const std::vector<float> floor8 = f32_to_host(deq.data(), n_out);

  const float ms16 = time_candidate(st, [&] {
    bf16.run(ctx, out16.data(), qkv.data());
    return true;
  });
  const float ms8 = time_candidate(st, [&] {
    fp8.run(ctx, out8.data(), qkv8.data(), scale, scale + 1);
    return true;
  });
  const double flop = 4.0 * B * kHeads * double(T) * T * kHeadDim / 2;  // Q·Kᵀ and P·V, the causal half
  std::printf("  bf16 %8.1f us  %6.1f TFLOP/s (causal half)\n", ms16 * 1e3, flop / (ms16 * 1e-3) / 1e12);
  std::printf("  fp8  %8.1f us  %6.1f TFLOP/s  x%.2f of bf16's time\n", ms8 * 1e3, flop / (ms8 * 1e-3) / 1e12,
              ms8 / ms16);
  std::printf("  fp8 output against bf16's: rel L2 %.3e (bf16's output rounded to e4m3 alone: %.3e)\n",
              rel_l2(got, want), rel_l2(floor8, want));
  return 0;
}

}  // namespace
}  // namespace laptime

int main(int argc, char** argv) {
  std::vector<std::pair<int, int>> shapes = {{8, 1024}, {1, 1024}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shapes" && i + 1 < argc) {
      shapes.clear();
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ',')) {
        int b = 0, t = 0;
        if (std::sscanf(item.c_str(), "%dx%d", &b, &t) != 2 || b <= 0 || t <= 0) {
          std::fprintf(stderr, "laptime_sdpa_probe: --shapes takes BxT pairs (8x1024), separated by commas.\n");
          return 2;
        }
        shapes.emplace_back(b, t);
      }
    } else {
      std::fprintf(stderr, "usage: laptime_sdpa_probe [--shapes 8x1024,1x1024]\n");
      return 2;
    }
  }
  try {
    laptime::Context ctx;
    int rc = 0;
    uint32_t seed = 1;
    for (auto [b, t] : shapes) rc |= laptime::probe(ctx, b, t, seed++);
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laptime_sdpa_probe: %s\n", e.what());
    return 1;
  }
}
