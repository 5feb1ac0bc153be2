#include "cli/kernels_command.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/help.h"
#include "trace/write/html_page.h"
#include "core/cli_numbers.h"
#include "core/os.h"
#include "core/output_file.h"
#include "trace/model/text.h"
#include "trace/ncu/ncu_diff.h"
#include "trace/ncu/ncu_handoff.h"
#include "trace/read/sidecars.h"

namespace laptime {
namespace {

trace::NcuLayers layers_of(const std::string& report, const std::string& costs_file, const KernelsOptions& o) {
  const trace::NcuReport r = trace::read_ncu_report(report);
  std::optional<trace::LayerCosts> costs;
  const std::string beside = trace::layer_costs_path(report);
  if (!costs_file.empty())
    costs = trace::read_layer_costs(costs_file);
  else if (path_exists(beside))  // not opened to look: a FIFO would block
    costs = trace::read_layer_costs(beside);
  trace::FoundCeilings found = trace::find_ceilings(o.peak, r.gpu);
  const std::optional<trace::Ceilings>& ceilings = found.ceilings;
  trace::NcuLayerOptions lo = o.layers;
  lo.pid = o.pid;  // a report of several processes: the one named
  trace::NcuLayers l = trace::ncu_layers(r, lo, costs ? &*costs : nullptr, ceilings ? &*ceilings : nullptr);
  if (!found.note.empty()) l.notes.push_back(found.note);
  if (ceilings && !r.gpu.empty() && ceilings->gpu != r.gpu)
    l.notes.push_back("the ceilings were measured on " + ceilings->gpu + ", the report ran on " + r.gpu + ".");
  return l;
}

}  // namespace

CLI::App* add_kernels_subcommand(CLI::App& app, KernelsOptions& o) {
  CLI::App* sub = app.add_subcommand("kernels", command_description("kernels"));
  sub->add_option("REPORT", o.reports,
                  "`ncu --csv --page raw` output or a .ncu-rep (converted with the ncu on PATH); two to compare")
      ->expected(0, 2);
  cli::heading(sub, cli::Group::Selection);
  sub->add_option_function<std::string>(
         "--by",
         [&o](const std::string& v) { o.layers.by = v == "block" ? trace::LayerKey::Block : trace::LayerKey::Folded; },
         "group with block indices folded (layer: h.*.attn, default) or kept (block: h.3.attn)")
      ->check(CLI::IsMember({"layer", "block"}));
  sub->add_option("--domain", o.layers.domain,
                  "only ranges of this NVTX domain count (`default` for ranges pushed without one); default: any")
      ->type_name("NAME");
  cli::add_integer(sub, "--pid", &o.pid, 0, 0xFFFFFF,
                   "the process: of a report holding several, whose kernels are read (refused without it); with "
                   "--command --from, of the capture");
  cli::heading(sub, cli::Group::Input);
  // Named files refuse an empty name, as analyze's and diff's do: `--json ''` wrote nothing and exited 0.
  cli::add_input_path(
      sub, "--layers", &o.costs,
      "the bench's layer costs (default: REPORT's stem + .layers.json, when present): moved/must, roofline");
  cli::add_input_path(sub, "--peak", &o.peak,
                      "the device's ceilings from `laptime peak` (default: its cache for the report's GPU)");
  cli::heading(sub, cli::Group::Output);
  cli::add_output_file(sub, "--json", &o.json,
                       "also write the numbers as JSON (laptime.kernels/1); - for standard output", true);
  cli::add_output_file(sub, "--svg", &o.svg,
                       "draw the roofline with the measured traffic (needs the layer costs and ceilings)");
  cli::add_output_file(sub, "--html", &o.html,
                       "write the report as one HTML page that opens from disk: the per-layer table with speed of "
                       "light (two reports: each layer's change); its data is the --json document");
  cli::heading(sub, cli::Group::NcuCommand);
  sub->add_option_function<std::string>(
         "--command", [&o](const std::string& m) { o.command = true, o.ncu.model = m; },
         "print the ncu command that profiles one forward of this model (with the shape flags below) and its time; "
         "lab KERNEL: laptime lab's versions of that kernel, one call each; with --from TRACE and no model, one "
         "steady iteration of the program that trace captured")
      ->expected(0, 1)
      ->check(CLI::Validator(
          [](std::string& m) {  // "" is --command with --from: no model
            return m.empty() || m == "gpt2" || m == "resnet50" || m == "lab" ? std::string()
                                                                             : m + " not in {gpt2,resnet50,lab}";
          },
          "{gpt2,resnet50,lab}"));
  cli::add_input_path(sub, "--from", &o.from,
                      "the nsys trace of the program to profile (its command line, iterations and kernel count); the "
                      "program after -- replaces the captured one");
  // The bench checks its own bounds again (bench/limits.h); these keep the printed command sane.
  cli::add_integer(sub, "--batch,-b", &o.ncu.batch, 1, 65536, "batch size");
  cli::add_integer(sub, "--seq,-t", &o.ncu.seq, 1, 65536, "gpt2: sequence length");
  cli::add_integer(sub, "--image-size", &o.ncu.image_size, 1, 8192, "resnet50: input height = width");
  sub->add_option("--precision,-p", o.ncu.precision, "the precision of the run profiled")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp8"}));
  sub->add_option("--attention", o.ncu.attention, "gpt2: the attention core: auto, cudnn, flash, wgmma or naive")
      ->check(CLI::IsMember({"auto", "cudnn", "flash", "wgmma", "naive"}).description(""))
      ->type_name("CORE");
  sub->add_option("--stem", o.ncu.stem, "resnet50: the stem")->check(CLI::IsMember({"auto", "cudnn", "fused"}));
  sub->add_option("--within", o.ncu.within, "profile only the kernels inside this range (h.0, conv1)")
      ->type_name("RANGE");
  sub->add_option("--output,-o", o.ncu.output, "the files' stem (default: the model and shape)")->type_name("STEM");
  cli::add_switch(sub, "--csv", &o.ncu.csv, "write the raw CSV (--csv --page raw) instead of a .ncu-rep");
  sub->add_option("--binary", o.ncu.binary, "the laptime binary to profile")->capture_default_str()->type_name("FILE");
  sub->add_option("--try", o.ncu.lab_tries, "lab KERNEL: your kernel file, one more rung (repeatable)")
      ->type_name("FILE.cu")
      ->allow_extra_args(false);
  return sub;
}

// `--command --from TRACE`: the ncu command for the traced program (trace/ncu/ncu_handoff.h).
int run_handoff(const KernelsOptions& o) {
  if (!o.ncu.model.empty())
    throw trace::TraceError("--command " + o.ncu.model +
                            " is laptime's own bench; --from TRACE is any program's: "
                            "give one of them.");
  const trace::NcuCommandOptions none;
  if (o.ncu.batch || o.ncu.seq || o.ncu.image_size || !o.ncu.precision.empty() || !o.ncu.attention.empty() ||
      !o.ncu.stem.empty() || o.ncu.csv || o.ncu.binary != none.binary)
    throw trace::TraceError(
        "--from takes the program from the trace (or after --): the bench's shape flags do not "
        "apply.");
  if (!o.reports.empty())
    throw trace::TraceError("--command prints the ncu command that makes a report: give it no report to read.");
  trace::NcuHandoffOptions h;
  h.trace = o.from;
  h.program = o.program;
  h.within = o.ncu.within;
  h.output = o.ncu.output;
  h.pid = o.pid;
  trace::print_ncu_command(trace::ncu_handoff(h), stdout);
  cli::Ending().finish();
  return 0;
}

int run_kernels(const KernelsOptions& o) {
  if (o.command && !o.from.empty()) return run_handoff(o);
  if (!o.from.empty() || !o.program.empty() || (o.command && o.pid))
    throw trace::TraceError(
        "--from, --pid and a program after -- go with --command: `laptime kernels --command --from "
        "TRACE [-- PROGRAM ARGS]`.");
  if (o.command && o.ncu.model.empty())
    throw trace::TraceError("--command takes gpt2 or resnet50 (laptime's own bench), or --from TRACE (any program).");
  if (o.command) {
    trace::NcuCommandOptions ncu = o.ncu;
    const size_t kernel = ncu.model == "lab" ? 1 : 0;  // --command lab KERNEL: the word after lab
    if (o.reports.size() > kernel)
      throw trace::TraceError("--command prints the ncu command that makes a report: give it no report to read.");
    if (kernel && !o.reports.empty()) ncu.lab_kernel = o.reports[0];
    trace::print_ncu_command(trace::ncu_command(ncu), stdout);
    cli::Ending().finish();  // to a full disk or a closed pipe: a failure, not exit 0
    return 0;
  }
  const trace::NcuCommandOptions none;
  if (o.ncu.batch || o.ncu.seq || o.ncu.image_size || !o.ncu.precision.empty() || !o.ncu.attention.empty() ||
      !o.ncu.stem.empty() || !o.ncu.within.empty() || !o.ncu.output.empty() || o.ncu.csv ||
      o.ncu.binary != none.binary || !o.ncu.lab_tries.empty())
    throw trace::TraceError(
        "the shape flags (-b, -t, --within, ...) describe the run --command profiles: give "
        "--command MODEL with them.");
  if (o.reports.empty())
    throw trace::TraceError(
        "laptime kernels needs a report (`ncu --csv --page raw` output or a .ncu-rep), two to "
        "compare, or --command MODEL for the ncu command that makes one.");
  const bool two = o.reports.size() == 2;
  std::string document;  // the --json text, made once for the JSON and the page
  if (two && !o.costs.empty())
    throw trace::TraceError(
        "--layers names one report's costs: with two reports each side's RUN.layers.json is found "
        "beside it.");
  if (two && !o.svg.empty()) throw trace::TraceError("--svg draws one report's roofline: give one report.");
  // Every output is checked before any report is read (core/output_file.h).
  // Every file the command reads, named or found: the reports, the layer costs beside each, the
  // peak cache (any GPU's: the report's is not known yet).
  std::vector<std::string> inputs = o.reports;
  inputs.insert(inputs.end(), {o.costs, o.peak});
  for (const std::string& r : o.reports) inputs.push_back(trace::layer_costs_path(r));
  for (std::string& cache : trace::peak_cache_files()) inputs.push_back(std::move(cache));
  std::optional<OutputFile> json_out;
  cli::open_outputs(json_out, {{"JSON report", o.json, true}, {"roofline SVG", o.svg}, {"HTML report", o.html}},
                    inputs);
  for (const std::string& r : o.reports)
    if (const std::string kind = non_regular_kind(r); !kind.empty())
      throw trace::TraceError(r + " is " + kind + ", not a regular file, so it cannot be a report.");
  if (two) {
    const trace::NcuDiff d = trace::ncu_diff(layers_of(o.reports[0], "", o), layers_of(o.reports[1], "", o));
    std::printf("laptime kernels %s %s\n", trace::escape_name(o.reports[0]).c_str(),
                trace::escape_name(o.reports[1]).c_str());
    trace::print_ncu_diff(d, stdout);
    if (json_out || !o.html.empty()) {  // the per-kernel rows written as text, one at a time
      trace::DeferredKernelLists rows;
      document = rows.text(trace::ncu_diff_to_json(d, &rows)) + "\n";
      cli::write_document(json_out, document);
    }
  } else {
    const trace::NcuLayers l = layers_of(o.reports[0], o.costs, o);
    std::printf("laptime kernels %s\n", trace::escape_name(o.reports[0]).c_str());
    trace::print_ncu_layers(l, stdout);
    if (json_out || !o.html.empty()) {
      trace::DeferredKernelLists rows;
      document = rows.text(trace::ncu_layers_to_json(l, &rows)) + "\n";
      cli::write_document(json_out, document);
    }
    if (!o.svg.empty()) trace::write_ncu_roofline_svg(l, o.svg);
  }
  if (!o.html.empty()) {
    std::string title = "laptime kernels";
    for (const std::string& r : o.reports) title += " " + r;
    trace::write_html(o.html, document, title);
  }
  cli::Ending end;
  end.wrote({{"JSON report", o.json}, {"roofline SVG", o.svg}, {"HTML report", o.html}});
  end.finish();
  return 0;
}

}  // namespace laptime
