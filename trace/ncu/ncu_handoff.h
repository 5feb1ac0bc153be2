// `laptime kernels --command --from TRACE [-- PROGRAM ARGS]`: the nsys -> ncu step for any program.
// The Nsight Systems trace already knows what ran and where its steady iterations are; this turns
// that into the Nsight Compute command line that profiles one steady iteration of the same program:
//
//   - the program: the capture's own command line (nsys's META_DATA_CAPTURE: PROCESS_0:COMMAND,
//     PROCESS_0:ARGUMENT_n, PROCESS_0:WORKING_DIR, run from that folder), or the one given after --;
//   - which kernels: --nvtx --nvtx-include on the iteration analyze takes as the median steady one
//     ("Forward Pass Iter 5/": a numbered family names one iteration; a range every iteration shares,
//     laptime's `forward`, gets --launch-skip and --launch-count of that iteration's kernels, as
//     the trace counted them), or --within a layer inside it ("Forward Pass Iter 5/h.0/");
//   - what `laptime kernels` reads: ncu_sections(), --print-units base, -o REPORT (-f);
//   - every word quoted for the shell (shell_words, trace/model/text.h: bash's $'...' for control
//     characters and bytes that are not UTF-8), so names with spaces, quotes, $(...) or two lines
//     paste back as themselves; a working folder starting with '-' is `cd ./-x`;
//   - refused in one sentence: a range, domain or --within name holding '/' or '@' (ncu's filter
//     separators, which it cannot escape), a gap in the recorded arguments, a command `laptime
//     scrub` reduced to its program's name, an empty program after --;
//   - how long it runs: the program's own start as the trace saw it (capture start to the first
//     iteration) plus ncu's seconds per profiled kernel (ncu_seconds_per_kernel()).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/ncu/ncu_command.h"
#include "trace/read/nsys_sqlite.h"  // captured_command

namespace laptime::trace {

struct NcuHandoffOptions {
  std::string trace;                 // an .nsys-rep or its SQLite export (or laptime's own trace)
  std::vector<std::string> program;  // after --: replaces the captured command line
  std::string within;                // a layer range inside the iteration (h.0, "Layer 4"); empty: all of it
  std::string output;                // the report's stem; empty: the trace's stem + "_ncu"
  std::optional<uint32_t> pid;       // the process, when the capture holds several loops
};

// Throws TraceError: no iterations, no command recorded and none given, a --within that no
// iteration holds.
NcuCommand ncu_handoff(const NcuHandoffOptions& o);

}  // namespace laptime::trace
