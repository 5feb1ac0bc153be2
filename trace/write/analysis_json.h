// The analysis as JSON (schema laptime.analyze/1): the same numbers as the text report, read
// from the same Analysis (trace/analyses/analysis.h). Strings are as the trace had them: the caller
// escapes them before dumping (escape_json_strings, trace/model/text.h).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trace/analyses/analysis.h"

namespace laptime::trace {

nlohmann::json to_json(const Analysis& a);
// The "steady_state" object analyze adds beside it (iterations.h's iteration_steady_state).
nlohmann::json steady_state_json(const IterationSteadyState& s);

}  // namespace laptime::trace
