// SHA-256 (FIPS 180-4) of bytes in memory, as lower-case hex: the content hash laptime names a
// learner's kernel file by (the lab's report, the bench's header) and keys its compiled binary
// by, the same digest `sha256sum FILE` prints. Host-only, in laptime_host.
#pragma once

#include <string>
#include <string_view>

namespace laptime {

std::string sha256_hex(std::string_view bytes);

}  // namespace laptime
