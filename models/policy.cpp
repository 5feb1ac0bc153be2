#include "models/policy.h"

#include <optional>

#include "core/env_switches.h"
#include "layers/cutlass/cutlass_gemm.h"
#include "weights/safetensors.h"

namespace laptime {
namespace {

// LAPTIME_GPT2_GELU as the model's own choice (core/env_switches.h).
GeluPlacement gelu_placement() {
  switch (env::gpt2_gelu()) {
    case Gpt2Gelu::Epilogue:
      return GeluPlacement::Epilogue;
    case Gpt2Gelu::Kernel:
      return GeluPlacement::Kernel;
    case Gpt2Gelu::Measured:
      break;
  }
  return GeluPlacement::Auto;
}

// LAPTIME_GPT2_GEMM; auto: timed where this GPU is offered CUTLASS's kernels, which enter only a
// choice that times its candidates; cuBLASLt's heuristic elsewhere.
GemmChoice gemm_choice(const Context& ctx) {
  switch (env::gpt2_gemm()) {
    case Gpt2Gemm::Timed:
      return GemmChoice::Timed;
    case Gpt2Gemm::Heuristic:
      return GemmChoice::Heuristic;
    case Gpt2Gemm::Auto:
      break;
  }
  return cutlass_gemm_kernels(ctx.device()).empty() ? GemmChoice::Heuristic : GemmChoice::Timed;
}

// splitmix64's output function, after its increment: every bit of z reaches every bit of the result.
uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Gpt2Build build_gpt2(Context& ctx, const WorkloadOptions& o, KernelFileLoader load_files) {
  Gpt2Build b;
  GPT2Config cfg = GPT2Config::small();
  HostWeights host;
  if (o.weights.empty()) {
    host = random_gpt2_weights(cfg, o.seed);
    b.weights_source = "random (seed " + std::to_string(o.seed) + ", GPT-2 small shapes)";
  } else {
    SafeTensors file = SafeTensors::open(o.weights);
    cfg = GPT2Config::from_file(file);
    host = load_gpt2_weights(file, cfg);
    b.weights_source = o.weights;
  }
  cfg.eager_loop = o.eager_loop;
  b.B = o.batch ? o.batch : 8;
  b.T = o.seq ? o.seq : cfg.n_ctx;
  // --kernel NAME=FILE.cu: checked at the shapes this model runs each kernel at (registry.h's dims).
  const int64_t C = cfg.n_embd, H = cfg.n_head, BT = int64_t{b.B} * b.T;
  cfg.kernels = load_files(
      ctx, o.kernels, o.kernel_files,
      {{"layernorm", {BT, C}}, {"attention", {b.B, b.T, H, C / H}}, {"embedding", {b.B, b.T, C, cfg.vocab_size}}},
      "gpt2", o.precision);
  b.model =
      std::make_unique<GPT2>(ctx, cfg, host, o.precision, b.B, b.T, o.attention, gelu_placement(), gemm_choice(ctx));
  return b;
}

Resnet50Build build_resnet50(Context& ctx, const WorkloadOptions& o, KernelFileLoader load_files) {
  Resnet50Build b;
  ResNetConfig cfg = ResNetConfig::resnet50();
  std::optional<SafeTensors> file;
  if (!o.weights.empty()) {
    file.emplace(SafeTensors::open(o.weights));
    cfg = ResNetConfig::from_file(*file);
  }
  b.B = o.batch ? o.batch : 256;
  b.S = o.image_size ? o.image_size : cfg.image_size;
  check_resnet50_input(cfg, b.B, b.S);
  HostWeights host;
  if (file) {
    host = load_resnet50_weights(*file, cfg);
    b.weights_source = o.weights;
  } else {
    host = random_resnet50_weights(cfg, o.seed);
    b.weights_source = "random (seed " + std::to_string(o.seed) + ", ResNet-50 shapes)";
  }
  // --kernel NAME=FILE.cu: checked at the shapes this model runs each kernel at (registry.h's dims):
  // the stem's 7x7/2 output, the max pool's 3x3/2, then three stride-2 stages.
  const auto half = [](int side) { return (side - 1) / 2 + 1; };  // a stride-2 window with its padding
  const int conv1 = half(b.S), last = half(half(half(half(conv1))));
  cfg.kernels = load_files(ctx, o.kernels, o.kernel_files,
                           {{"maxpool", {b.B, conv1, conv1, cfg.base_width}},
                            {"avgpool", {b.B, last, last, cfg.features()}},
                            {"stem", {b.B, conv1 + 3, cfg.base_width}}},
                           "resnet50", o.precision);
  cfg.eager_loop = o.eager_loop;
  b.model = std::make_unique<ResNet50>(ctx, cfg, host, o.precision, b.B, b.S, o.stem);
  return b;
}

std::vector<int32_t> seeded_tokens(uint64_t seed, int64_t count, int vocab) {
  const uint64_t base = mix64(seed);
  std::vector<int32_t> tokens(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<int32_t>(mix64(base + i) % static_cast<uint64_t>(vocab));
  return tokens;
}

std::vector<float> seeded_images(uint64_t seed, int64_t count) {
  // The sum of four U(0, 1) has mean 2 and variance 1/3; √3 (as Python's float(3 ** 0.5) spells
  // it) scales it to 1.
  constexpr double kSqrt3 = 1.7320508075688772;
  const uint64_t base = mix64(seed);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint64_t bits = mix64(base + i);
    double sum = 0.0;  // in 65536ths: each quarter an integer plus one half, every sum exact
    for (int k = 0; k < 4; ++k) sum += static_cast<double>((bits >> (16 * k)) & 0xFFFF) + 0.5;
    values[i] = static_cast<float>((sum / 65536.0 - 2.0) * kSqrt3);
  }
  return values;
}

}  // namespace laptime
