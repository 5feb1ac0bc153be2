// ResNet-50 as a bench workload (lands with models/resnet50).
#include "bench/workload.h"
#include "core/check.h"

namespace laptime {

std::unique_ptr<Workload> make_resnet50_workload(Context&, const WorkloadOptions&) {
  throw Error("resnet50 is not built into this laptime yet.");
}

}  // namespace laptime
