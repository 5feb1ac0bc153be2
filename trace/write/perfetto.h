// The trace as Chrome Trace Event JSON, for ui.perfetto.dev or chrome://tracing when the Nsight
// Systems GUI is not at hand (or the trace came from laptime's CUPTI tracer).
//
// One process per captured process with a lane per CPU thread: NVTX push/pop ranges with
// the CUDA API calls nested inside them (start/end ranges, which need not nest, get a lane
// of their own). One process per GPU with a lane per CUDA stream: kernels, copies and
// memsets, their category and launch geometry in args, and CUDA Graph replays traced whole
// (category cuda_graph); a graph node's work names the range its node was made in (args.layer).
// A flow arrow joins each launch call to the work it launched.
//
// Streamed: each event is written as it is made, through a buffer of a few megabytes, so the
// export holds no document in memory whatever the trace's size (a million kernels once took 8 GB
// as one JSON tree). And windowed: a browser does not load a file of a gigabyte, so past
// kPerfettoEvents events the default window is the steady iterations around the median one that
// hold at most that many (perfetto_window says the rule; --window all keeps every event).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/analyses/iterations.h"
#include "trace/analyses/join.h"
#include "trace/model/error.h"

namespace laptime::trace {

// Events a default export holds at most (about 50 MB of JSON, which ui.perfetto.dev opens in
// seconds); a trace with more is cut to a window of its steady iterations.
constexpr size_t kPerfettoEvents = 200'000;

// The part of the trace an export holds: every event that overlaps [lo, hi], or all of them.
struct PerfettoWindow {
  bool all = true;
  Ns lo = 0, hi = 0;
  std::string rule;  // what was kept and why, in words ("" for the whole trace by default)
};

// --window SPEC: "auto" (the default: the whole trace when it holds at most kPerfettoEvents
// events, else the steady iterations of the first loop centred on its median one, as many in a
// row as hold at most that many), "all", "steady" (every steady iteration of every loop), or
// iteration numbers "N" / "N-M" of the first loop. An iteration's time is its host range and its
// GPU span together. Throws TraceError with one sentence for a SPEC it cannot use.
PerfettoWindow perfetto_window(const TraceJoin& j, const std::vector<const Iterations*>& loops,
                               const std::string& spec);
// Checks SPEC's spelling alone (before the trace is read); throws TraceError.
void check_perfetto_window_spec(const std::string& spec);

// Throws TraceError when the file cannot be written.
void write_perfetto(const TraceJoin& j, const std::string& path, const PerfettoWindow& window = {});

}  // namespace laptime::trace
