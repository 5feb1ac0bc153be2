// The convention a learner's kernel file follows, so that `laptime lab KERNEL --try FILE.cu` and
// `laptime bench MODEL --kernel KERNEL=FILE.cu` can run it as one more version of a lab kernel.
// One convention for every kernel (`laptime lab KERNEL --template` writes a file that keeps it):
//
//   extern "C" __global__ void KERNEL(PARAMS...)
//       the kernel, named after the lab kernel (`layernorm`), its parameters exactly those of the
//       table below: outputs first, then inputs, then the dimensions, as the lab's launchers take
//       them (kernels/lab/launch.cuh). Pointers are device memory, row-major, densely packed.
//   __device__ LaunchShape KERNEL_launch(INTEGERS..., int sms)
//       the launch shape of one call: every integer parameter of the kernel in its order, then the
//       GPU's SM count (for a grid sized to the GPU). The lab runs it on the GPU once per shape,
//       before the calls it times, and launches KERNEL with what it returns (the grid, the block,
//       the dynamic shared memory; above 48 KiB the lab raises the kernel's limit for it).
//   scalar_t
//       the data type of the run: the lab compiles the file once per precision with LAPTIME_FP32
//       (scalar_t float) or LAPTIME_BF16 (scalar_t __nv_bfloat16) defined; fp8's kernels (quantize,
//       amax) read bf16 and name their types outright. The template defines scalar_t from these.
//
// The lab appends to the file, after `#line 1 "laptime-lab-signature"`, a static_assert per
// declaration (a mismatch is a compile error naming the signature expected) and a kernel that
// runs KERNEL_launch and writes its LaunchShape where the lab reads it; and it checks that the
// compiled code (PTX) has an entry point KERNEL with parameters of these kinds (extern "C": a
// C++ name would be mangled, and the lab could not find it).
//
// Host-only: the text and the checks; kernels/lab/try_compile.h compiles, kernels/lab/user_kernel.h
// loads and launches.
#pragma once

#include <string>
#include <vector>

namespace laptime::lab {

// A parameter's kind as the PTX entry declares it (.u64 for a pointer or a long long, .u32 for
// an int, .f32 for a float).
enum class ParamKind { Pointer, Int32, Int64, Float32 };

struct TryParam {
  std::string type;     // as the file declares it: "scalar_t*", "const scalar_t*", "int", "long long", "float"
  std::string name;     // "out"
  std::string meaning;  // its layout and what it holds, for the template's comments and the docs
  ParamKind kind = ParamKind::Pointer;
};

struct TrySignature {
  std::string kernel;            // the lab kernel (kernels/lab/registry.h) and the entry's name
  std::vector<TryParam> params;  // the kernel's, in order
  // What the lab guarantees before each call, beyond the parameters (one sentence; "" none).
  std::string contract;

  // The launch function's parameters: the kernel's integers in order, then `int sms`.
  std::vector<TryParam> launch_params() const;
  std::string launch_name() const { return kernel + "_launch"; }
  // `extern "C" __global__ void layernorm(scalar_t* out, ..., float eps)`
  std::string kernel_declaration() const;
  // `__device__ LaunchShape layernorm_launch(int rows, int C, int sms)`
  std::string launch_declaration() const;
};

// The signature of every lab kernel that takes a learner's file, in the registry's order.
const std::vector<TrySignature>& try_signatures();
// nullptr for a kernel that takes no file (or no kernel at all).
const TrySignature* find_try_signature(const std::string& kernel);

// The name of the kernel the lab appends to run the launch function: `laptime_launch_shape`.
const char* launch_shape_entry();
// The macro the lab defines for a precision ("fp32": LAPTIME_FP32, "bf16" and "fp8": LAPTIME_BF16).
std::string precision_macro(const std::string& precision);
// What the lab appends to the file before compiling it (the top of this header says what).
std::string signature_footer(const TrySignature& s);

// "" when `ptx` defines the entry `s.kernel` with parameters of the signature's kinds and the
// launch-shape entry, else why not, one sentence naming `file` (a mangled C++ name found in its
// place is named: the extern "C" is missing).
std::string check_ptx_entries(const std::string& ptx, const TrySignature& s, const std::string& file);

// The C declaration's type of a parameter kind: "void*" aside, for messages ("an int").
const char* param_kind_name(ParamKind k);

}  // namespace laptime::lab
