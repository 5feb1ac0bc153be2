// Question 3: which kernels run? By category (library names first, then the enclosing NVTX
// range: a non-GEMM kernel under `h.3.attn` is attention, then generic names), by kernel, and
// by the layer range that launched them, over the steady iterations. classify_kernel and
// category_name are declared in report.h (the SVG colours use them too).
#pragma once

#include <vector>

#include "trace/report.h"

namespace laptime::trace {

// Fills a.gpu_time, a.htod_time, a.categories, a.kernels, a.ranges and a.range_patterns.
void kernel_mix(const TraceJoin& j, const std::vector<std::vector<int>>& ops_of, Analysis& a);

}  // namespace laptime::trace
