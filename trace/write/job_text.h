// The job view as text, for a terminal: one line per report (and process) with its lap, busy %
// and verdict, the spread, the straggler's layers against the median report's, and the gate.
// Reads a Job only (trace/compare/job.h).
#pragma once

#include <cstdio>

#include "trace/compare/job.h"

namespace laptime::trace {

void print_job(const Job& job, std::FILE* out);

}  // namespace laptime::trace
