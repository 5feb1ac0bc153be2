// The per-layer roofline (trace/analyses/roofline.h) presented: the text table, its JSON, and
// the plot (drawn by trace/write/roofline_svg.h).
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "trace/analyses/roofline.h"

namespace laptime::trace {

void print_roofline(const Roofline& r, std::FILE* out);
nlohmann::json roofline_to_json(const Roofline& r);
// Log-log: FLOP/byte across, TFLOP/s up, the bandwidth slope and the compute roof of the
// run's precision, one labelled point per folded row. Needs ceilings and a layer to draw:
// check_roofline_svg throws the sentence when it cannot (before the report is printed).
void check_roofline_svg(const Roofline& r);
void write_roofline_svg(const Roofline& r, const std::string& path);

}  // namespace laptime::trace
