// The whole trace as Chrome Trace Event JSON, for ui.perfetto.dev or chrome://tracing when
// the Nsight Systems GUI is not at hand (or the trace came from laptime's CUPTI tracer).
//
// One process per captured process with a lane per CPU thread: NVTX push/pop ranges with
// the CUDA API calls nested inside them (start/end ranges, which need not nest, get a lane
// of their own). One process per GPU with a lane per CUDA stream: kernels, copies and
// memsets, their category and launch geometry in args, and CUDA Graph replays traced whole
// (category cuda_graph); a graph node's work names the range its node was made in (args.layer).
// A flow arrow joins each launch call to the work it launched.
#pragma once

#include <string>

#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

// Throws TraceError when the file cannot be written.
void write_perfetto(const TraceJoin& j, const std::string& path);

}  // namespace laptime::trace
