// The folder laptime keeps what it measured or built once for the next runs: `laptime peak`'s
// ceilings (trace/read/sidecars.h) and the lab's compiled kernel files (kernels/lab/try_compile.h).
// Host-only, in laptime_host.
#pragma once

#include <string>

namespace laptime {

// $LAPTIME_CACHE_DIR, else $XDG_CACHE_HOME/laptime, else $HOME/.cache/laptime, else ".".
std::string laptime_cache_dir();

}  // namespace laptime
