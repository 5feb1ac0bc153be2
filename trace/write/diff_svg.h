// The diff as a picture: the two median iterations one above the other on one time axis, their
// layer rows and kernels coloured by category (svg.h's colours), top-level layers joined by
// lines so a layer that moved or grew shows at a glance.
#pragma once

#include <string>

#include "trace/compare/diff.h"

namespace laptime::trace {

// Throws TraceError when neither side is a trace with GPU work in a steady iteration, or when
// the file cannot be written.
void write_diff_svg(const Diff& d, const std::string& path);

}  // namespace laptime::trace
