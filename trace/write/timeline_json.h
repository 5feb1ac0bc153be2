// The timeline a report page draws (trace/analyses/timeline.h) as the `timeline` member of
// laptime.analyze/1. Times are ns on the trace's clock, as every other *_ns time of the report, so
// an event, a gap or a synchronization call is found in the report's tables by its start_ns.
// Names are held once, in `names`, and events name them by index: a kernel name of a few hundred
// characters shown a thousand times costs one string. Null when no iteration has GPU work.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trace/analyses/timeline.h"

namespace laptime::trace {

nlohmann::json timeline_to_json(const Timeline& t);

}  // namespace laptime::trace
