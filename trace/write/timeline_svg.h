// One steady iteration as a picture: the answer to "solid blocks of kernels, or gaps?" at
// a glance, in a file any browser opens and any PR can embed.
//
// Lanes, top to bottom: the NVTX ranges of the iterating thread (one row per nesting
// level), its CUDA API calls (launches grey, synchronizations red), then one lane per CUDA
// stream with kernels coloured by category. Idle gaps above the threshold are shaded
// across the GPU lanes and labelled with their length. Every box has a tooltip (name,
// duration).
#pragma once

#include <string>

#include "trace/analyses/analysis.h"
#include "trace/model/category.h"
#include "trace/model/error.h"
#include "trace/analyses/join.h"

namespace laptime::trace {

// Draws iteration `iteration` (an index into a.iterations; -1: a.svg_iteration, the steady
// iteration whose GPU span is the median). Throws TraceError when there is no such iteration
// with GPU work, or when the file cannot be written.
// Throws the sentence write_svg would when the iteration cannot be drawn (none with GPU work):
// called before the report is printed, so a run that cannot draw writes nothing.
void check_svg(const Analysis& a, int iteration = -1);
void write_svg(const TraceJoin& j, const Analysis& a, const std::string& path, int iteration = -1);

// The fill colour of a category in the SVG (and its legend).
const char* category_color(Category c);

}  // namespace laptime::trace
