// The diff as text, for a terminal: both sides, the method, the notes, one row per layer with
// its interval and label, the kernels that appeared or disappeared, the verdict and the gate.
// Reads a Diff only (trace/compare/diff.h).
#pragma once

#include <cstdio>

#include "trace/compare/diff.h"

namespace laptime::trace {

void print_diff(const Diff& d, std::FILE* out);

}  // namespace laptime::trace
