// Where sm_90a code runs (wgmma and the other "a" features: kernels/CMakeLists.txt's library of
// it, the wgmma stem and attention core): in a build that compiled it (LAPTIME_HAVE_SM90A, a build
// for sm_90), on an sm_90 device (sm_90a code runs on no other architecture). One rule for every
// kernel built that way.
#pragma once

#include <string>

namespace laptime {

// "" where sm_90a code runs on `device`, else one sentence saying why `what` ("the wgmma stem")
// does not.
std::string sm90a_refusal(const std::string& what, int device);

}  // namespace laptime
