#include "cli/gpu_cli.h"

#include <CLI/CLI.hpp>

#include "bench/limits.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/host_cli.h"
#include "core/check.h"
#include "core/cli_numbers.h"
#include "core/input_file.h"

namespace laptime {
namespace {

// CLI11 checks the spelling (IsMember: "... not in {bf16,fp32,tf32}"); these tables then
// map the accepted word onto our enums.
const std::map<std::string, Precision> kPrecisions{
    {"fp32", Precision::FP32}, {"tf32", Precision::TF32}, {"bf16", Precision::BF16}, {"fp8", Precision::FP8}};
const std::map<std::string, NvtxLevel> kNvtxLevels{
    {"none", NvtxLevel::None}, {"iter", NvtxLevel::Iter}, {"block", NvtxLevel::Block}, {"layer", NvtxLevel::Layer}};
const std::map<std::string, Pitfall>& kPitfalls = pitfall_words();
const std::map<std::string, AttentionKind> kAttention{{"auto", AttentionKind::Auto},
                                                      {"cudnn", AttentionKind::Cudnn},
                                                      {"flash", AttentionKind::Flash},
                                                      {"wgmma", AttentionKind::Wgmma},
                                                      {"naive", AttentionKind::Naive}};
const std::map<std::string, StemKind> kStems{
    {"auto", StemKind::Auto}, {"cudnn", StemKind::Cudnn}, {"fused", StemKind::Fused}};
const std::map<std::string, StreamKind>& kStreams = stream_words();

// The model and its shape, under the Model heading (bench and forward).
void add_workload_options(CLI::App* app, WorkloadOptions* w, std::vector<std::string>* kernel_words) {
  app->add_option("MODEL", w->model, "gpt2 or resnet50")->required()->check(CLI::IsMember({"gpt2", "resnet50"}));
  cli::heading(app, cli::Group::Model);
  cli::add_input_file(app, "--weights", &w->weights,
                      "laptime .safetensors file (weights/convert.py); default: seeded "
                      "random weights of the real shape");
  cli::add_integer(app, "--seed", &w->seed, 0, INT64_MAX, "seed for random weights and inputs");
  cli::add_integer(app, "--batch,-b", &w->batch, 1, limits::kMaxBatch, "batch size (default: gpt2 8, resnet50 256)")
      ->default_str("");
  cli::add_integer(app, "--seq,-t", &w->seq, 1, limits::kMaxSeq, "gpt2: sequence length (default: n_ctx, 1024)")
      ->default_str("");
  cli::add_integer(app, "--image-size", &w->image_size, 1, limits::kMaxImageSize,
                   "resnet50: input height = width (default 224)")
      ->default_str("");
  app->add_option_function<std::string>(
         "--precision,-p", [w](const std::string& v) { w->precision = kPrecisions.at(v); },
         "fp32 (strict), tf32, bf16 (default) or fp8 (bf16 with e4m3 GEMMs where they are "
         "faster, scales calibrated on the input batch; sm_89+)")
      ->check(CLI::IsMember(kPrecisions));
  app->add_option_function<std::string>(
         "--attention", [w](const std::string& v) { w->attention = kAttention.at(v); },
         "gpt2: attention core, cudnn (bf16, tf32), flash (our fused kernels: bf16 with "
         "head size 64, fp32 and tf32 with head size 16, 32 or 64), wgmma (flash on Hopper's warpgroup MMA: "
         "bf16, head size 64, sm_90) or naive (T x T "
         "matrix, every precision); default auto: the fastest for the precision")
      ->check(CLI::IsMember(kAttention));
  app->add_option_function<std::string>(
         "--stem", [w](const std::string& v) { w->stem = kStems.at(v); },
         "resnet50: the stem, cudnn (4x4 space-to-depth convolution, then max pool) or "
         "fused (conv, ReLU and max pool in one kernel, bf16); default auto: fused where it runs, else cudnn")
      ->check(CLI::IsMember(kStems));
  app->add_option("--kernel", *kernel_words,
                  "NAME=VERSION or NAME=FILE.cu (repeatable): run laptime lab's version of that kernel in the model "
                  "(layernorm=v1; `laptime lab --list`), or your own kernel file (`laptime lab NAME --template`), "
                  "checked first at the model's shape; default: production")
      ->type_name("NAME=VERSION|FILE.cu")
      ->allow_extra_args(false);
}

// --kernel's words into the workload's choice, checked against the model and its precision.
void resolve_kernel_choice(const std::vector<std::string>& words, WorkloadOptions* w) {
  for (const std::string& word : words) {
    const std::string why = lab::add_kernel_choice(word, &w->kernels, &w->kernel_files);
    require(why.empty(), why);
  }
  const std::string why = lab::check_kernel_choice(w->kernels, w->model, precision_name(w->precision), w->kernel_files);
  require(why.empty(), why);
  for (const auto& [name, path] : w->kernel_files) {
    const std::string problem = input_problem(path);
    require(problem.empty(), "--kernel " + name + "=" + path + ": " + path + " " + problem + ".");
  }
  require(
      !((w->kernels.count("attention") || w->kernel_files.count("attention")) && w->attention != AttentionKind::Auto),
      "--kernel attention and --attention both choose the attention core; give one.");
}

CLI::App* add_lab_subcommand(CLI::App& app, lab::LabOptions& l, std::optional<uint32_t>* seed,
                             CLI::Option** template_option) {
  CLI::App* lab = app.add_subcommand("lab", command_description("lab"));
  lab->add_option("KERNEL", l.kernel, "the kernel whose versions to run (`laptime lab --list`)");
  cli::heading(lab, cli::Group::Selection);
  cli::add_switch(lab, "--list", &l.list, "list the kernels and their versions (with --json: as JSON too)");
  lab->add_option("--versions", l.versions,
                  "all (default), none (your --try files alone), or version ids separated by commas: v1,v3")
      ->type_name("IDS");
  lab->add_option("--shape", l.shapes,
                  "(repeatable) check and time at this shape instead of the models' ones; the dimensions not named "
                  "keep the first model shape's values (rows=1000,C=771)")
      ->type_name("NAME=VALUE,...");
  lab->add_option("--precision,-p", l.precision, "fp32, bf16 or fp8 (default: the kernel's first)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp8"}));
  cli::heading(lab, cli::Group::Input);
  cli::add_input_file(lab, "--peak", &l.peak, "the ceilings from `laptime peak` (default: its cache for this GPU)");
  cli::heading(lab, cli::Group::Run);
  cli::add_integer(lab, "--seed", seed, 0, UINT32_MAX, "seed of the inputs (default: a fresh one, printed)");
  cli::add_positive_real(lab, "--target", &l.target, 0.5,
                         "time until the median's 95% interval is within this fraction of it on each side (0.01)");
  cli::add_switch(
      lab, "--once", &l.once,
      "one call a version and shape inside its NVTX range, not timed: for ncu (`laptime kernels --command "
      "lab KERNEL`) and compute-sanitizer, --try files in this process; with --json, the layer costs beside "
      "it");
  cli::add_integer(lab, "--device", &l.device, 0, limits::kMaxDevice, "CUDA device index");
  cli::heading(lab, cli::Group::Output);
  cli::add_output_file(lab, "--json", &l.json, "also write the results as JSON (laptime.lab/1); - for standard output",
                       true);
  cli::add_output_file(lab, "--html", &l.html,
                       "write the results as one HTML page that opens from disk: each shape's ladder with its "
                       "intervals and roofs; its data is the --json document");
  // A learner's own kernel (bench/lab/lab.h; docs/KERNELS.md "Write your own").
  *template_option = lab->add_option("--template", l.template_text_path,
                                     "write a complete file for --try, KERNEL's signature and a plain correct body, to "
                                     "FILE (never over an existing one) or standard output")
                         ->expected(0, 1)
                         ->type_name("[FILE]");
  cli::heading(lab, cli::Group::Input);
  lab->add_option("--try", l.tries,
                  "FILE.cu (repeatable): your kernel, compiled at run time (NVRTC) and run as one more rung: checked, "
                  "timed, named by the file")
      ->type_name("FILE.cu")
      ->allow_extra_args(false);
  cli::heading(lab, cli::Group::Run);
  cli::add_positive_real(lab, "--timeout", &l.timeout, 3600,
                         "--try: seconds one wait on the GPU may last before the file's process is stopped (5)");
  cli::heading(lab, cli::Group::Selection);
  cli::add_switch(lab, "--all", &l.all,
                  "every kernel's first and production versions, and a summary: times, % of roof, the geometric mean "
                  "of the speed-ups");
  return lab;
}
// What the parse collects before it can be checked and put into a Command.
struct Words {
  bool graph = false;                      // bench --graph
  std::vector<std::string> bench_kernels;  // bench --kernel NAME=VERSION, each
  std::vector<std::string> forward_kernels;
  std::optional<uint32_t> lab_seed;
  CLI::Option* lab_template = nullptr;  // lab --template [FILE]: given, with or without its FILE
};

// `laptime bench`: its options into cmd.bench.
CLI::App* add_bench_subcommand(CLI::App& app, Command& cmd, Words* words) {
  CLI::App* bench = app.add_subcommand("bench", command_description("bench"));
  BenchOptions& b = cmd.bench;
  add_workload_options(bench, &b.workload, &words->bench_kernels);
  cli::heading(bench, cli::Group::Run);
  cli::add_integer(bench, "--warmup,-w", &b.warmup, 0, limits::kMaxWarmup,
                   "warm-up iterations (marked, excluded from statistics)");
  cli::add_integer(bench, "--iters,-n", &b.iters, 1, limits::kMaxIters, "timed steady-state iterations");
  bench
      ->add_option_function<std::string>(
          "--nvtx", [&b](const std::string& v) { b.nvtx = kNvtxLevels.at(v); },
          "NVTX ranges: none, iter, block or layer (default)")
      ->check(CLI::IsMember(kNvtxLevels));
  cli::add_switch(bench, "--graph", &words->graph, "capture one forward in a CUDA Graph and replay it");
  bench
      ->add_option_function<std::string>(
          "--stream", [&b](const std::string& v) { b.stream = kStreams.at(v); },
          "created (a non-blocking stream, default) or default (legacy stream 0)")
      ->check(CLI::IsMember(kStreams));
  cli::add_integer(bench, "--device", &b.device, 0, limits::kMaxDevice, "CUDA device index");
  bench
      ->add_option_function<std::string>(
          "--pitfall", [&b](const std::string& v) { b.pitfall = kPitfalls.at(v); },
          "demo a classic mistake inside the loop (off by default): sync (read a value back and wait "
          "at every layer end, as .item()/max() do), pageable (torch.tensor(list).cuda()), "
          "alloc (cudaMalloc/cudaFree)")
      ->check(CLI::IsMember(kPitfalls));
  cli::heading(bench, cli::Group::Output);
  cli::add_output_file(bench, "--json", &b.json,
                       "also write the report as JSON (schema laptime.bench/1); - for standard output", true);
  cli::add_output_file(bench, "--trace", &b.trace,
                       "capture the run with CUPTI (kernels, CUDA API, NVTX) into FILE, for `laptime analyze FILE`; "
                       "not under nsys or ncu");
  cli::add_output_file(bench, "--output,-o", &b.output, "also write the last lap's logits, raw fp32 like forward's -o");

  return bench;
}

CLI::App* add_forward_subcommand(CLI::App& app, Command& cmd, Words* words) {
  CLI::App* fwd = app.add_subcommand("forward", command_description("forward"));
  ForwardOptions& f = cmd.forward;
  add_workload_options(fwd, &f.workload, &words->forward_kernels);
  cli::heading(fwd, cli::Group::Input);
  cli::add_input_file(fwd, "--tokens", &f.tokens, "gpt2: token ids, raw little-endian int32 [B, T]");
  cli::add_input_file(fwd, "--input", &f.input, "resnet50: images, raw little-endian fp32 NCHW [B, 3, S, S]");
  cli::add_input_file(fwd, "--calibrate", &f.calibrate,
                      "fp8: the batch the activation scales come from, in --tokens' or --input's format and shape "
                      "(default: the input itself)");
  cli::heading(fwd, cli::Group::Run);
  cli::add_integer(fwd, "--device", &f.device, 0, limits::kMaxDevice, "CUDA device index");
  cli::heading(fwd, cli::Group::Output);
  cli::add_output_file(fwd, "--output,-o", &f.output, "where to write the logits, raw little-endian fp32")->required();

  return fwd;
}

CLI::App* add_peak_subcommand(CLI::App& app, Command& cmd) {
  CLI::App* peak = app.add_subcommand("peak", command_description("peak"));
  cli::heading(peak, cli::Group::Run);
  cli::add_integer(peak, "--device", &cmd.peak.device, 0, limits::kMaxDevice, "CUDA device index");
  peak->add_flag("--force", cmd.peak.force, "measure again even when the cache holds this GPU's ceilings");
  cli::heading(peak, cli::Group::Output);
  cli::add_output_file(peak, "--cache", &cmd.peak.cache,
                       "the cache file (default: ~/.cache/laptime/peak-<GPU name>.json)");

  return peak;
}

}  // namespace

Command parse_command_line(const std::vector<std::string>& args) {
  CLI::App app{kLaptimeDescription, "laptime"};
  cli::use_laptime_help(app);
  app.require_subcommand(1);
  Command cmd;
  // The table's Gpu rows, in its order (cli/commands.h); the executable parses the Host ones.
  Words words;
  std::vector<std::pair<CLI::App*, Command::Kind>> subs;
  for (const CommandInfo& c : kCommands) {
    if (c.side != Side::Gpu) continue;
    const std::string name = c.name;
    if (name == "bench")
      subs.emplace_back(add_bench_subcommand(app, cmd, &words), Command::Kind::Bench);
    else if (name == "forward")
      subs.emplace_back(add_forward_subcommand(app, cmd, &words), Command::Kind::Forward);
    else if (name == "peak")
      subs.emplace_back(add_peak_subcommand(app, cmd), Command::Kind::Peak);
    else if (name == "lab")
      subs.emplace_back(add_lab_subcommand(app, cmd.lab, &words.lab_seed, &words.lab_template), Command::Kind::Lab);
    else
      throw std::logic_error("cli/commands.h lists a GPU subcommand the module has no parser for: " + name);
  }
  BenchOptions& b = cmd.bench;
  ForwardOptions& f = cmd.forward;

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
    require(
        !(w->attention == AttentionKind::Wgmma && w->precision != Precision::BF16 && w->precision != Precision::FP8),
        std::string("--attention wgmma runs in bf16 (and fp8, whose core is bf16), not ") +
            precision_name(w->precision) + "; use --attention flash (or auto).");
    require(!(w->attention == AttentionKind::Cudnn && w->precision == Precision::FP32),
            "--attention cudnn runs in bf16 and tf32 (cuDNN's fused attention takes 16-bit data), not strict fp32; "
            "use --attention naive (or auto).");
  }
  for (const auto& [sub, kind] : subs)
    if (sub->parsed()) cmd.kind = kind;
  if (cmd.kind == Command::Kind::Bench) resolve_kernel_choice(words.bench_kernels, &b.workload);
  if (cmd.kind == Command::Kind::Forward) resolve_kernel_choice(words.forward_kernels, &f.workload);
  if (cmd.kind == Command::Kind::Bench) {
    if (words.graph) b.graph = GraphMode::Graph;
    limits::check_tokens(b.workload.batch, b.workload.seq);
    require(!(b.graph == GraphMode::Graph && b.stream == StreamKind::Legacy),
            "--graph needs --stream created: the legacy default stream cannot be captured.");
    require(!(b.graph == GraphMode::Graph && b.pitfall != Pitfall::None),
            "--pitfall cannot be combined with --graph: a graph cannot capture a synchronization or an allocation.");
  } else if (cmd.kind == Command::Kind::Lab) {
    cmd.lab.seed = words.lab_seed;
    if (words.lab_template->count()) cmd.lab.template_file = cmd.lab.template_text_path;
    lab::resolve_lab_options(cmd.lab);
  } else if (cmd.kind == Command::Kind::Forward) {
    limits::check_tokens(f.workload.batch, f.workload.seq);
    require(f.workload.model != "gpt2" || !f.tokens.empty(), "laptime forward gpt2 needs --tokens FILE.");
    require(f.workload.model != "resnet50" || !f.input.empty(), "laptime forward resnet50 needs --input FILE.");
    require(f.calibrate.empty() || f.workload.precision == Precision::FP8, "--calibrate applies to -p fp8 only.");
  }
  return cmd;
}

}  // namespace laptime
