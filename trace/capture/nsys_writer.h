// laptime's own trace format: the trace model written as the subset of Nsight Systems' SQLite
// schema that read/nsys_sqlite.h reads, so `laptime analyze` reads a CUPTI capture
// (capture/cupti_tracer.h) and an nsys export through one path.
#pragma once

#include <string>

#include "trace/model/trace.h"

namespace laptime::trace {

// Writes `t` as the subset of the nsys schema that load_nsys_sqlite reads, replacing any
// file at `path`. Thread ids are packed into globalTid as nsys packs them
// ((pid << 24) | tid), so the file also opens in scripts written for nsys exports.
void save_nsys_sqlite(const Trace& t, const std::string& path);

}  // namespace laptime::trace
