// The job view as JSON (schema laptime.job/1): "reports", one object per report (and process)
// with the fields of its single-file analysis that the job keeps (laps, busy, verdict, its
// iterations and layers), and "job", the summary: the spread, the straggler with its diff (as
// `laptime diff --json` writes it, laptime.diff/1) and the gate. Reads a Job only. Strings are as
// the traces had them: the caller escapes them before dumping (escape_json_strings).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trace/compare/job.h"

namespace laptime::trace {

nlohmann::json job_to_json(const Job& job);

}  // namespace laptime::trace
