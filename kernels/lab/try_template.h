// `laptime lab KERNEL --template [FILE]`: a complete file for `--try` (and `--kernel
// KERNEL=FILE.cu`) that compiles and passes the lab's checks as written: a comment giving the
// kernel's signature with the layout and precision of every argument (kernels/lab/try_signature.h),
// the lab's convention (scalar_t, LaunchShape: kernels/lab/templates/prologue.cuh), and a plain,
// correct body, the learner's v1 (kernels/lab/templates/KERNEL.cu). Host-only.
#pragma once

#include <string>

namespace laptime::lab {

// The template of `kernel`; throws Error for a kernel that takes no file.
std::string template_text(const std::string& kernel);

}  // namespace laptime::lab
