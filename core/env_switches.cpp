#include "core/env_switches.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "core/check.h"

namespace laptime::env {

namespace {

// A word switch: unset or empty gives `fallback`; a word that is not listed throws
// "NAME must be 'a', 'b' or 'c', not 'x'." (docs/ERRORS.md).
template <class E>
E word(const Switch& s, E fallback, std::initializer_list<std::pair<const char*, E>> words) {
  const std::string v = text(s);
  if (v.empty()) return fallback;
  std::string list;
  std::size_t i = 0;
  for (const auto& [w, value] : words) {
    if (v == w) return value;
    list += std::string(i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + "'" + w + "'";
    ++i;
  }
  throw Error(std::string(s.name) + " must be " + list + ", not '" + v + "'.");
}

}  // namespace

std::string text(const Switch& s) {
  const char* v = std::getenv(s.name);
  return v ? v : "";
}

Fp8Policy fp8_gemm() {
  static const Fp8Policy p = word(kFp8Gemm, Fp8Policy::Auto,
                                  {{"auto", Fp8Policy::Auto}, {"fp8", Fp8Policy::Always}, {"bf16", Fp8Policy::Never}});
  return p;
}

bool fp8_fast_accum() {
  static const bool on = word(kFp8FastAccum, true, {{"on", true}, {"off", false}});
  return on;
}

Fp8Pairing fp8_mlp() {
  static const Fp8Pairing p =
      word(kFp8Mlp, Fp8Pairing::Pair, {{"pair", Fp8Pairing::Pair}, {"apart", Fp8Pairing::Apart}});
  return p;
}

namespace {
enum class ConvTune { Once, Final, Off };
ConvTune conv_tune_word() {
  static const ConvTune t =
      word(kConvTune, ConvTune::Once, {{"once", ConvTune::Once}, {"final", ConvTune::Final}, {"off", ConvTune::Off}});
  return t;
}
}  // namespace

bool conv_tune() { return conv_tune_word() != ConvTune::Off; }

bool conv_final_round() { return conv_tune_word() == ConvTune::Final; }

const std::vector<std::string>& cudnn_deselect_engines() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    const std::string list = text(kCudnnDeselectEngines);
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) v.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    return v;
  }();
  return names;
}

Gpt2Gelu gpt2_gelu() {
  static const Gpt2Gelu g =
      word(kGpt2Gelu, Gpt2Gelu::Measured, {{"epilogue", Gpt2Gelu::Epilogue}, {"kernel", Gpt2Gelu::Kernel}});
  return g;
}

Gpt2Gemm gpt2_gemm() {
  static const Gpt2Gemm g =
      word(kGpt2Gemm, Gpt2Gemm::Auto,
           {{"auto", Gpt2Gemm::Auto}, {"timed", Gpt2Gemm::Timed}, {"heuristic", Gpt2Gemm::Heuristic}});
  return g;
}

bool cutlass() {
  static const bool on = word(kCutlass, true, {{"auto", true}, {"off", false}});
  return on;
}

bool cutlass_pdl() {
  static const bool on = word(kCutlassPdl, true, {{"on", true}, {"off", false}});
  return on;
}

bool eager_timing_direct() {
  static const bool direct = word(kEagerTiming, false, {{"graph", false}, {"direct", true}});
  return direct;
}

bool bench_clock() {
  static const bool on = word(kBenchClock, true, {{"on", true}, {"off", false}});
  return on;
}

ResnetFp8 resnet_fp8() {
  static const ResnetFp8 r =
      word(kResnetFp8, ResnetFp8::Auto,
           {{"auto", ResnetFp8::Auto}, {"stream", ResnetFp8::Stream}, {"layers", ResnetFp8::Layers}});
  return r;
}

ResnetShortcut resnet_shortcut() {
  static const ResnetShortcut r =
      word(kResnetShortcut, ResnetShortcut::Auto,
           {{"auto", ResnetShortcut::Auto}, {"folded", ResnetShortcut::Folded}, {"apart", ResnetShortcut::Apart}});
  return r;
}

}  // namespace laptime::env
