// Every LAPTIME_* environment variable laptime reads, in one place: its name, the values it
// takes, its default and what it changes, then one accessor each. Nothing else calls getenv on
// a LAPTIME_* name (docs/DESIGN-NOTES.md, "Environment switches", is the same table for readers).
//
// Why the environment and not a flag: these are a developer's levers on choices made at build
// time (prepare()), deep in the layers, for before/after timings and for bisecting a library's
// engine without rebuilding; a flag would thread each of them through every constructor above.
// The command line stays the interface for everything a run means to do.
//
// Each accessor reads its variable once, on first call, and keeps that value for the process
// (a run sees one setting from its first layer to its last). Unset or empty gives the default.
// A word switch given a word it does not list throws laptime::Error, one sentence:
// "LAPTIME_FP8_MLP must be 'pair' or 'apart', not 'joint'." (docs/ERRORS.md).
//
// The header is plain C++ (no CUDA), so that host-only code may name a switch; the accessors
// live in laptime_core (the CUDA build).
#pragma once

#include <string>
#include <vector>

namespace laptime {

// fp8 (Precision::FP8): how each GEMM-shaped layer (Linear, 1×1 Conv2d) chooses e4m3 or bf16.
enum class Fp8Policy { Auto, Always, Never };
// fp8: GPT-2's c_fc and mlp.c_proj chosen together or each on its own (layers/gpt2/mlp.h).
enum class Fp8Pairing { Pair, Apart };
// GPT-2 (bench): where the GELU runs; Measured leaves it to the model's per-precision default.
enum class Gpt2Gelu { Measured, Epilogue, Kernel };
// LAPTIME_GPT2_GEMM.
enum class Gpt2Gemm { Auto, Timed, Heuristic };
// LAPTIME_RESNET_FP8.
enum class ResnetFp8 { Auto, Stream, Layers };
// LAPTIME_RESNET_SHORTCUT.
enum class ResnetShortcut { Auto, Folded, Apart };

namespace env {

struct Switch {
  const char* name;
  const char* values;    // what it takes
  const char* fallback;  // unset or empty
  const char* meaning;
};

inline constexpr Switch kFp8Gemm{
    "LAPTIME_FP8_GEMM", "auto / fp8 / bf16", "auto",
    "fp8 runs: each GEMM-shaped layer's fp8-or-bf16 choice measured per shape (auto), forced to fp8 "
    "(tests: the arithmetic, not the timing), or never fp8 (the fp8 build's bf16 baseline). "
    "layers/linear.h, layers/resnet50/conv2d.h."};
inline constexpr Switch kFp8FastAccum{
    "LAPTIME_FP8_FAST_ACCUM", "on / off", "on",
    "fp8 runs: every e4m3 GEMM leaves its sum to the tensor cores' own accumulator (cuBLASLt's "
    "CUBLASLT_MATMUL_DESC_FAST_ACCUM, CUTLASS's FP8FastAccum kernels), or promotes it to fp32 every "
    "4 k-blocks (off). On because it measured faster: GPT-2 B8 3.27 -> 3.05 ms, the end-to-end "
    "error unchanged. layers/gemm.h."};
inline constexpr Switch kFp8Mlp{
    "LAPTIME_FP8_MLP", "pair / apart", "pair",
    "fp8 GPT-2: c_fc and mlp.c_proj chosen together, c_fc writing e4m3 for c_proj where that pair "
    "measured faster (pair), or each on its own as the first fp8 probes did (apart). layers/gpt2/mlp.h."};
inline constexpr Switch kConvTune{
    "LAPTIME_CONV_TUNE", "once / final / off", "once",
    "ResNet-50: each convolution's candidates timed once and the fastest kept (once); then the few "
    "within 10% of the fastest timed again in turn and the fastest of that final round kept (final: "
    "an experiment until it is measured, docs/history/resnet50-notes.md); or not timed, cuDNN's first "
    "supported plan kept (off: fused, else separate; no cuBLASLt route). layers/resnet50/conv_plan.h."};
inline constexpr Switch kCudnnDeselectEngines{
    "LAPTIME_CUDNN_DESELECT_ENGINES", "engine names, comma-separated (eng4,eng39)", "none",
    "ResNet-50: cuDNN engines left out of every convolution plan, for bisecting a wrong or slow "
    "engine without rebuilding. layers/resnet50/conv_plan.h."};
inline constexpr Switch kGpt2Gelu{
    "LAPTIME_GPT2_GELU", "epilogue / kernel", "per precision (layers/gpt2/mlp.h)",
    "bench and forward, GPT-2: the GELU in c_fc's cuBLASLt epilogue or in its own kernel, for "
    "before/after timings of that fusion. layers/gpt2/mlp.h."};
inline constexpr Switch kGpt2Gemm{
    "LAPTIME_GPT2_GEMM", "auto / timed / heuristic", "auto",
    "bench and forward, GPT-2: the linear layers' algorithms timed at build (GemmTuner: cuBLASLt's "
    "first few and the CUTLASS kernels) or cuBLASLt's first heuristic answer; auto times them "
    "where the GPU is offered CUTLASS kernels (they enter only a timed choice), else heuristic. "
    "layers/gemm_tuner.h."};
inline constexpr Switch kCutlass{
    "LAPTIME_CUTLASS", "auto / off", "auto",
    "H100/H200 builds with sm_90: CUTLASS's sm_90a GEMMs offered to every timed GEMM choice beside "
    "cuBLASLt's algorithms (auto), or withheld, every GEMM on cuBLASLt, for an A/B (off). "
    "layers/cutlass/cutlass_gemm.h."};
inline constexpr Switch kCutlassPdl{
    "LAPTIME_CUTLASS_PDL", "on / off", "on",
    "Hopper: CUTLASS's GEMMs launched as programmatic dependents of the work before them on the "
    "stream (their launch and prologue under its tail; compiled with CUTLASS's grid dependency "
    "control, each waits for it before touching memory) (on: GPT-2 B8 fp8 -0.03 to -0.08 ms on an "
    "H100, docs/history/hopper-kernels.md), or plainly, for an A/B (off). "
    "layers/cutlass/sm90_gemm.cuh."};
inline constexpr Switch kResnetFp8{
    "LAPTIME_RESNET_FP8", "auto / stream / layers", "auto",
    "fp8 ResNet-50: every tensor between two layers e4m3 (stream: conv1, conv3 and the downsample "
    "fp8 GEMMs, conv3 adding the e4m3 residual, the 3x3s CUTLASS fp8 implicit-GEMM convolutions), or "
    "bf16 activations with each 1x1 convolution's fp8-or-bf16 choice measured (layers, the "
    "first fp8 design); auto is stream where CUTLASS's kernels run (an sm_90 build on compute capability 9.0), "
    "else layers. layers/resnet50/e4m3_block.h."};
inline constexpr Switch kResnetShortcut{
    "LAPTIME_RESNET_SHORTCUT", "auto / folded / apart", "auto",
    "ResNet-50 outside fp8: each block with a downsample runs its shortcut folded into conv3, t2 "
    "and the strided input copied side by side and one convolution over both (folded: no shortcut "
    "tensor written and read back), apart (the downsample's own convolution, conv3 adding its "
    "output), or the faster of the two as measured at build (auto). layers/resnet50/bottleneck.h."};
inline constexpr Switch kEagerTiming{
    "LAPTIME_EAGER_TIMING", "graph / direct", "graph",
    "bench without --graph (and forward): every candidate a build times (a convolution's plan, a "
    "GEMM's algorithm, an fp8-or-bf16 choice) timed in a CUDA graph as a --graph build times it "
    "(graph), or launched directly, run after run, as the eager loop launches it, so a library's "
    "memset before its kernel and each launch's gap are charged (direct: measured no faster at "
    "ResNet-50 B256 or GPT-2 B8, docs/history/hopper-kernels.md). core/timing.h."};
inline constexpr Switch kBenchClock{
    "LAPTIME_BENCH_CLOCK", "on / off", "on",
    "bench: the SM clock and the energy counter read through NVML every millisecond of the loop, "
    "each lap's clock and whether the power cap (or heat) held it down reported beside it, and the "
    "energy per forward (on), or not read, for an A/B of the sampler itself (off). bench/clocks.h."};
// Read by trace/ (the cached `laptime peak` file's folder), listed here so the table is whole.
inline constexpr Switch kCacheDir{"LAPTIME_CACHE_DIR", "a folder", "$XDG_CACHE_HOME/laptime, else $HOME/.cache/laptime",
                                  "where `laptime peak` caches the device's ceilings and the roofline looks for them."};

// Every switch above, in this order: the docs table's rows (tests/test_env_switches.cpp checks
// that the two name the same switches).
inline constexpr Switch kAllSwitches[] = {
    kFp8Gemm, kFp8FastAccum, kFp8Mlp,    kConvTune,       kCudnnDeselectEngines, kGpt2Gelu,   kGpt2Gemm,
    kCutlass, kCutlassPdl,   kResnetFp8, kResnetShortcut, kEagerTiming,          kBenchClock, kCacheDir};

Fp8Policy fp8_gemm();                                      // LAPTIME_FP8_GEMM
bool fp8_fast_accum();                                     // LAPTIME_FP8_FAST_ACCUM is not "off"
Fp8Pairing fp8_mlp();                                      // LAPTIME_FP8_MLP
bool conv_tune();                                          // LAPTIME_CONV_TUNE is not "off"
bool conv_final_round();                                   // LAPTIME_CONV_TUNE is "final"
const std::vector<std::string>& cudnn_deselect_engines();  // LAPTIME_CUDNN_DESELECT_ENGINES, empty items dropped
Gpt2Gelu gpt2_gelu();                                      // LAPTIME_GPT2_GELU
Gpt2Gemm gpt2_gemm();                                      // LAPTIME_GPT2_GEMM
bool cutlass();                                            // LAPTIME_CUTLASS is not "off"
bool cutlass_pdl();                                        // LAPTIME_CUTLASS_PDL is not "off"
ResnetFp8 resnet_fp8();                                    // LAPTIME_RESNET_FP8
ResnetShortcut resnet_shortcut();                          // LAPTIME_RESNET_SHORTCUT
bool eager_timing_direct();                                // LAPTIME_EAGER_TIMING is "direct"
bool bench_clock();                                        // LAPTIME_BENCH_CLOCK is not "off"

// The text `s` is set to now, "" when unset: for a report that says which switches a run had.
std::string text(const Switch& s);

}  // namespace env
}  // namespace laptime
