// The analysis as JSON (schema laptime.analyze/1): the same numbers as the text report, read
// from the same Analysis (trace/analyses/analysis.h). Strings are as the trace had them: the caller
// escapes them before dumping (escape_json_strings, trace/model/text.h).
#pragma once

#include <cstdint>
#include <functional>

#include <nlohmann/json_fwd.hpp>

#include "trace/analyses/analysis.h"

namespace laptime::trace {

nlohmann::json to_json(const Analysis& a);
// The "settling" object analyze adds beside it (iterations.h's iteration_settling), and diff
// for each side: where the per-iteration time's initial transient ends, and its level shifts.
// `index_of`: a position in the iterations -> the iteration's number.
nlohmann::json settling_json(const stats::Settling& s, size_t warmup, const std::function<uint64_t(size_t)>& index_of);
nlohmann::json settling_json(const IterationSettling& s, const Iterations& a);

}  // namespace laptime::trace
