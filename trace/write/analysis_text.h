// The analysis as text, for a terminal: the header, the four answers as aligned tables, the
// verdict. Reads an Analysis only (trace/analyses/analysis.h).
#pragma once

#include <cstdio>

#include "trace/analyses/analysis.h"

namespace laptime::trace {

void print_report(const Analysis& a, std::FILE* out);

}  // namespace laptime::trace
