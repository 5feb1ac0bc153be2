// The pieces of a lab run that a learner's file shares with the ladder (bench/lab/run.cpp): the
// result begun, the checks and timings of its versions, the speed-ups. Internal to bench/lab/.
#pragma once

#include <vector>

#include "bench/lab/lab.h"
#include "bench/lab/result.h"
#include "core/context.h"

namespace laptime::lab {

// The result of a run of `version_indices` (the ladder's, or a learner's file's past it): the
// versions, the shapes of o.timed_shapes, the roofs of this GPU.
LabResult start_result(const LabOptions& o, const KernelInfo& k, const Context& ctx,
                       const std::vector<int>& version_indices);
// Every version of `r`: checked at the odd shapes and the timed ones, then timed (bench/lab/measure.h).
// A learner's file that leaves the GPU unusable ends the work here, its rung FAILED.
void run_versions(const LabOptions& o, const KernelInfo& k, Context& ctx, LabResult& r);
// The speed-ups at shape `si`: over the version before (the ladder's), over production, over the
// ladder's fastest.
void speedups(LabResult& r, int si);
// `laptime lab --all`.
int run_all(const LabOptions& o);

}  // namespace laptime::lab
