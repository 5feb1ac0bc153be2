// The diff as JSON (schema laptime.diff/1): the same rows as the text, read from the same Diff.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trace/compare/diff.h"

namespace laptime::trace {

nlohmann::json diff_to_json(const Diff& d);

}  // namespace laptime::trace
