// `laptime bench|forward MODEL --kernel KERNEL=FILE.cu`: a learner's kernel file in every place
// the model runs that kernel. Before the model is built, each file is compiled for this GPU
// (kernels/lab/try_compile.h, from the lab's cache when `laptime lab KERNEL --try FILE.cu` made it),
// loaded as one more version of its kernel (kernels/lab/user_kernel.h) and checked against the
// CPU reference at the model's own shape, on random, zero and huge inputs as the lab checks a
// version (outputs poisoned and guarded); a file that fails is refused with its worst element,
// one that does not compile with the compiler's messages. Then the model takes it as any
// `--kernel KERNEL=VERSION`: the choice is its version index. A wait on the GPU that passes
// kCheckTimeoutSeconds ends the process with one sentence (bench/lab/try_child.h's watchdog).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "kernels/lab/registry.h"

namespace laptime::lab {

inline constexpr double kCheckTimeoutSeconds = 30;

// `shapes`: the registry's dimensions of each kernel as the model runs it (gpt2's layernorm:
// {B·T, C}). Returns `choice` with each file's version index added. Throws Error with one sentence.
KernelChoice load_kernel_files(Context& ctx, const KernelChoice& choice, const KernelFiles& files,
                               const std::map<std::string, std::vector<int64_t>>& shapes, const std::string& model,
                               Precision precision);

}  // namespace laptime::lab
