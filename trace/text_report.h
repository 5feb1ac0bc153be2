// The analysis as text, for a terminal: the header, the four answers as aligned tables, the
// verdict. Reads an Analysis only (trace/analysis.h).
#pragma once

#include <cstdio>

#include "trace/analysis.h"

namespace laptime::trace {

void print_report(const Analysis& a, std::FILE* out);

}  // namespace laptime::trace
