#include "cli/gpu_cli.h"

#include <CLI/CLI.hpp>

#include "bench/limits.h"
#include "cli/commands.h"
#include "cli/host_cli.h"
#include "core/check.h"
#include "core/cli_numbers.h"

namespace laptime {
namespace {

// CLI11 checks the spelling (IsMember: "... not in {bf16,fp32,tf32}"); these tables then
// map the accepted word onto our enums.
const std::map<std::string, Precision> kPrecisions{
    {"fp32", Precision::FP32}, {"tf32", Precision::TF32}, {"bf16", Precision::BF16}, {"fp8", Precision::FP8}};
const std::map<std::string, NvtxLevel> kNvtxLevels{
    {"none", NvtxLevel::None}, {"iter", NvtxLevel::Iter}, {"block", NvtxLevel::Block}, {"layer", NvtxLevel::Layer}};
const std::map<std::string, Pitfall>& kPitfalls = pitfall_words();
const std::map<std::string, AttentionKind> kAttention{
    {"auto", AttentionKind::Auto}, {"cudnn", AttentionKind::Cudnn}, {"flash", AttentionKind::Flash},
    {"naive", AttentionKind::Naive}};
const std::map<std::string, StemKind> kStems{
    {"auto", StemKind::Auto}, {"cudnn", StemKind::Cudnn}, {"fused", StemKind::Fused}};
const std::map<std::string, StreamKind>& kStreams = stream_words();

void add_workload_options(CLI::App* app, WorkloadOptions* w) {
  app->add_option("model", w->model, "gpt2 or resnet50")->required()->check(CLI::IsMember({"gpt2", "resnet50"}));
  cli::add_input_file(app, "--weights", &w->weights, "laptime .safetensors file (weights/convert.py); default: seeded "
                                                      "random weights of the real shape");
  cli::add_integer(app, "--seed", &w->seed, 0, INT64_MAX, "seed for random weights and inputs");
  cli::add_integer(app, "--batch,-b", &w->batch, 1, limits::kMaxBatch, "batch size (default: gpt2 8, resnet50 256)")
      ->default_str("");
  cli::add_integer(app, "--seq,-t", &w->seq, 1, limits::kMaxSeq, "gpt2: sequence length (default: n_ctx, 1024)")
      ->default_str("");
  cli::add_integer(app, "--image-size", &w->image_size, 1, limits::kMaxImageSize,
                   "resnet50: input height = width (default 224)")
      ->default_str("");
  app->add_option_function<std::string>("--precision,-p", [w](const std::string& v) { w->precision = kPrecisions.at(v); },
                                        "fp32 (strict), tf32, bf16 (default) or fp8 (bf16 with e4m3 GEMMs where they are "
                                        "faster, scales calibrated on the input batch; sm_89+)")
      ->check(CLI::IsMember(kPrecisions));
  app->add_option_function<std::string>("--attention", [w](const std::string& v) { w->attention = kAttention.at(v); },
                                        "gpt2: attention core, cudnn (bf16, tf32), flash (our fused kernels: bf16 with "
                                        "head size 64, fp32 and tf32 with head size 16, 32 or 64) or naive (T x T "
                                        "matrix, every precision); default auto: the fastest for the precision")
      ->check(CLI::IsMember(kAttention));
  app->add_option_function<std::string>("--stem", [w](const std::string& v) { w->stem = kStems.at(v); },
                                        "resnet50: the stem, cudnn (4x4 space-to-depth convolution, then max pool) or "
                                        "fused (conv, ReLU and max pool in one kernel, bf16); default auto: fused where it runs, else cudnn")
      ->check(CLI::IsMember(kStems));
}

}  // namespace

Command parse_command_line(const std::vector<std::string>& args) {
  CLI::App app{kLaptimeDescription, "laptime"};
  app.require_subcommand(1);
  Command cmd;

  CLI::App* bench = app.add_subcommand("bench", gpu_command_description("bench"));
  BenchOptions& b = cmd.bench;
  add_workload_options(bench, &b.workload);
  cli::add_integer(bench, "--warmup,-w", &b.warmup, 0, limits::kMaxWarmup,
                   "warm-up iterations (marked, excluded from statistics)");
  cli::add_integer(bench, "--iters,-n", &b.iters, 1, limits::kMaxIters, "timed steady-state iterations");
  bench->add_option_function<std::string>("--nvtx", [&b](const std::string& v) { b.nvtx = kNvtxLevels.at(v); },
                                          "NVTX ranges: none, iter, block or layer (default)")
      ->check(CLI::IsMember(kNvtxLevels));
  bool graph = false;
  cli::add_switch(bench, "--graph", &graph, "capture one forward in a CUDA Graph and replay it");
  bench->add_option_function<std::string>("--stream", [&b](const std::string& v) { b.stream = kStreams.at(v); },
                                          "created (a non-blocking stream, default) or default (legacy stream 0)")
      ->check(CLI::IsMember(kStreams));
  cli::add_integer(bench, "--device", &b.device, 0, limits::kMaxDevice, "CUDA device index");
  bench->add_option_function<std::string>("--pitfall", [&b](const std::string& v) { b.pitfall = kPitfalls.at(v); },
                                          "demo a classic mistake inside the loop (off by default): sync (read a value back and wait "
                                          "at every layer end, as .item()/max() do), pageable (torch.tensor(list).cuda()), "
                                          "alloc (cudaMalloc/cudaFree)")
      ->check(CLI::IsMember(kPitfalls));
  cli::add_output_file(bench, "--json", &b.json,
                       "also write the report as JSON (schema: docs/PERF.md); - for standard output", true);
  cli::add_output_file(bench, "--trace", &b.trace,
                       "capture the run with CUPTI (kernels, CUDA API, NVTX) into FILE, for `laptime analyze FILE`; "
                       "not under nsys or ncu");

  CLI::App* fwd = app.add_subcommand("forward", gpu_command_description("forward"));
  ForwardOptions& f = cmd.forward;
  add_workload_options(fwd, &f.workload);
  cli::add_input_file(fwd, "--tokens", &f.tokens, "gpt2: token ids, raw little-endian int32 [B, T]");
  cli::add_input_file(fwd, "--input", &f.input, "resnet50: images, raw little-endian fp32 NCHW [B, 3, S, S]");
  cli::add_output_file(fwd, "--output,-o", &f.output, "where to write the logits, raw little-endian fp32")->required();
  cli::add_input_file(fwd, "--calibrate", &f.calibrate,
                      "fp8: the batch the activation scales come from, in --tokens' or --input's format and shape "
                      "(default: the input itself)");
  cli::add_integer(fwd, "--device", &f.device, 0, limits::kMaxDevice, "CUDA device index");

  CLI::App* analyze = add_analyze_subcommand(app, cmd.analyze);
  CLI::App* diff = add_diff_subcommand(app, cmd.diff);
  CLI::App* kernels = add_kernels_subcommand(app, cmd.kernels);

  CLI::App* peak = app.add_subcommand("peak", gpu_command_description("peak"));
  cli::add_integer(peak, "--device", &cmd.peak.device, 0, limits::kMaxDevice, "CUDA device index");
  cli::add_output_file(peak, "--cache", &cmd.peak.cache, "the cache file (default: ~/.cache/laptime/peak-<GPU name>.json)");
  peak->add_flag("--force", cmd.peak.force, "measure again even when the cache holds this GPU's ceilings");

  const std::string error = parse_subcommands(app, args, &cmd.help_text);
  require(error.empty(), error);
  if (!cmd.help_text.empty()) return cmd;
  for (const WorkloadOptions* w : {&b.workload, &f.workload}) {
    require(w->attention == AttentionKind::Auto || w->model != "resnet50", "--attention applies to gpt2 only.");
    // --attention flash runs in every precision; the head size it needs is checked where the
    // weights are known (CausalSelfAttention's constructor).
    require(w->stem == StemKind::Auto || w->model != "gpt2", "--stem applies to resnet50 only.");
    require(!(w->stem == StemKind::Fused && w->precision != Precision::BF16 && w->precision != Precision::FP8),
            std::string("--stem fused runs only in bf16, not ") + precision_name(w->precision) +
                "; use --stem cudnn (or auto).");
    require(!(w->attention == AttentionKind::Cudnn && w->precision == Precision::FP32),
            "--attention cudnn runs in bf16 and tf32 (cuDNN's fused attention takes 16-bit data), not strict fp32; "
            "use --attention naive (or auto).");
  }
  if (bench->parsed()) {
    cmd.kind = Command::Kind::Bench;
    if (graph) b.graph = GraphMode::Graph;
    limits::check_tokens(b.workload.batch, b.workload.seq);
    require(!(b.graph == GraphMode::Graph && b.stream == StreamKind::Legacy),
            "--graph needs --stream created: the legacy default stream cannot be captured.");
    require(!(b.graph == GraphMode::Graph && b.pitfall != Pitfall::None),
            "--pitfall cannot be combined with --graph: a graph cannot capture a synchronization or an allocation.");
  } else if (analyze->parsed()) {
    cmd.kind = Command::Kind::Analyze;
  } else if (diff->parsed()) {
    cmd.kind = Command::Kind::Diff;
  } else if (kernels->parsed()) {
    cmd.kind = Command::Kind::Kernels;
  } else if (peak->parsed()) {
    cmd.kind = Command::Kind::Peak;
  } else {
    cmd.kind = Command::Kind::Forward;
    limits::check_tokens(f.workload.batch, f.workload.seq);
    require(f.workload.model != "gpt2" || !f.tokens.empty(), "laptime forward gpt2 needs --tokens FILE.");
    require(f.workload.model != "resnet50" || !f.input.empty(), "laptime forward resnet50 needs --input FILE.");
    require(f.calibrate.empty() || f.workload.precision == Precision::FP8, "--calibrate applies to -p fp8 only.");
  }
  return cmd;
}

}  // namespace laptime
