// `laptime kernels`: Nsight Compute reports per layer (trace/ncu/ncu_layers.h), two of them compared
// (trace/ncu/ncu_diff.h), or the ncu command line that makes one (trace/ncu/ncu_command.h).
//
//   laptime kernels REPORT [--by layer|block] [--domain D] [--layers FILE] [--peak FILE] [--json F] [--svg F] [--html F]
//   laptime kernels A B    [--by ...] [--domain D] [--peak FILE] [--json F] [--html F]
//   laptime kernels --command gpt2|resnet50 [-b B] [-t T] [--image-size S] [--precision P]
//                   [--attention A] [--stem S] [--within RANGE] [-o NAME] [--csv]
//   laptime kernels --command lab KERNEL [--precision P] [-o NAME] [--csv]
//   laptime kernels --command --from TRACE [--within RANGE] [-o NAME] [--pid N] [-- PROGRAM ARGS]
//                   (any program: trace/ncu/ncu_handoff.h)
//
// REPORT is `ncu --csv --page raw` output or a .ncu-rep (converted with the ncu on PATH). Host
// only, like analyze and diff; the work lives in trace/, this is the command line around it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/ncu/ncu_command.h"
#include "trace/ncu/ncu_layers.h"

namespace CLI {
class App;
}

namespace laptime {

struct KernelsOptions {
  std::vector<std::string> reports;  // one, or two to compare
  trace::NcuLayerOptions layers;     // --by, --domain
  std::string costs;                 // --layers: the bench's RUN.layers.json (default: beside the report)
  std::string peak;                  // --peak: `laptime peak`'s file (default: its cache for the report's GPU)
  std::string json;                  // schema laptime.kernels/1 (laptime.kernels.diff/1 for two); - for stdout
  std::string svg;                   // the measured roofline
  std::string html;                  // the report page (trace/write/html_page.h): the --json document drawn
  bool command = false;              // --command was given: print the ncu command instead
  trace::NcuCommandOptions ncu;      // its model and shape
  std::string from;                  // --command --from TRACE: the traced program's ncu command
  std::vector<std::string> program;  // after -- (with --from): the program instead of the captured one
  std::optional<uint32_t> pid;       // the process: of a report of several, or (--from) of the capture
};

CLI::App* add_kernels_subcommand(CLI::App& app, KernelsOptions& o);

// Prints to stdout and writes the files asked for; a report that cannot be read throws
// trace::TraceError with one sentence.
int run_kernels(const KernelsOptions& o);

}  // namespace laptime
