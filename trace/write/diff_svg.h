// The diff as a picture: the two median iterations one above the other on one time axis, their
// layer rows and kernels coloured by category (svg.h's colours), top-level layers joined by
// lines so a layer that moved or grew shows at a glance; a SLOWER or FASTER layer is marked on
// the after side (red or green, its change and interval in its tooltip).
#pragma once

#include <string>

#include "trace/compare/diff.h"

namespace laptime::trace {

// Throws TraceError when neither side is a trace with GPU work in a steady iteration (check_diff_svg:
// before the diff is printed), or when the file cannot be written.
void check_diff_svg(const Diff& d);
void write_diff_svg(const Diff& d, const std::string& path);

}  // namespace laptime::trace
