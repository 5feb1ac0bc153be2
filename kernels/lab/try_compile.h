// A learner's kernel file compiled at run time with NVRTC, the toolkit's runtime compiler (no
// GPU needed: this is host code), for `laptime lab KERNEL --try FILE.cu` and `laptime bench
// MODEL --kernel KERNEL=FILE.cu`.
//
// The compile: the file's text, then the lab's footer (kernels/lab/try_signature.h: the
// signature checks and the launch-shape kernel), with
//   --gpu-architecture=ARCH   the card's (sm_90a on a compute capability 9.0 card, so Hopper's
//                             wgmma and TMA work; sm_MN elsewhere), sm_90a without a GPU
//   -lineinfo                 so Nsight Compute shows the file's source lines
//   --std=c++17, -DLAPTIME_FP32 or -DLAPTIME_BF16 (the precision), -I the file's folder and
//   -I the CUDA headers' folder, found in this order (the first that holds cuda_bf16.h):
//     1. $CUDA_HOME/include, then $CUDA_PATH/include (the variables PyTorch's extensions read)
//     2. the folder of the NVRTC library this process loaded, ../include, and the include
//        folders of the pip packages beside it (site-packages/nvidia/cuda_nvrtc/lib ->
//        nvidia/cuda_runtime/include, nvidia/cu13/include, ...): where a PyTorch
//        environment's nvidia-cuda-nvrtc and nvidia-cuda-runtime wheels put them
//     3. the folder of the nvcc on PATH, ../include
//     4. the toolkit this laptime was built with, then /usr/local/cuda/include
// The compiler's messages are kept as it wrote them (FILE(LINE): error: ...), warnings too.
// Then the PTX's entries are checked against the signature.
//
// The binary is cached by content: KEY.cubin in the nvrtc/ folder of the cache laptime keeps
// `laptime peak`'s ceilings in ($LAPTIME_CACHE_DIR, else $XDG_CACHE_HOME/laptime, else
// ~/.cache/laptime), KEY the SHA-256 of NVRTC's version, the architecture, the options, the
// footer and the file's bytes. A file that #includes a file of its own ("...") is compiled every
// time: its key would not see that file change. A cache that cannot be written only costs the
// next run a compile.
#pragma once

#include <string>
#include <vector>

#include "kernels/lab/try_signature.h"

namespace laptime::lab {

// A learner's file, read before any long work.
struct TrySource {
  std::string path;    // as the user gave it (the compiler's messages name it so)
  std::string text;    // its bytes
  std::string sha256;  // of the bytes (`sha256sum FILE`)
};

// Reads `path` (a regular file of at most 1 MiB); throws InputError with one sentence.
TrySource read_try_source(const std::string& path);

struct CudaIncludeDir {
  std::string dir;                 // "" when none of the places holds the headers
  std::vector<std::string> tried;  // every place looked at, in order, for the message
};
CudaIncludeDir find_cuda_include_dir();

// NVRTC's version, "13.0".
std::string nvrtc_version();
// The architecture NVRTC compiles for on a card of compute capability major.minor: "sm_90a" for
// 9.0, "sm_MN" otherwise. `kNoGpuArch` without a card.
std::string try_arch(int major, int minor);
inline constexpr const char* kNoGpuArch = "sm_90a";

struct TryBinary {
  bool compiled = false;
  std::string log;      // NVRTC's messages as it wrote them (errors, or warnings of a good compile)
  std::string problem;  // when not compiled and the compiler said nothing: why, one sentence
  std::string cubin;    // the machine code for `arch`
  std::string arch, nvrtc;
  std::string cache_file;  // where the binary is kept, or was found; "" when not cached
  std::string cache_note;  // why it was not cached, "" when it was
  bool from_cache = false;
  double seconds = 0;  // the compile's wall time (0 from the cache)
};

// How a binary was made, as the reports say it: "sm_90a, NVRTC 13.0, 0.23 s" or "..., from the cache"
// (and why it was not cached, where it was not).
std::string compiled_text(const TryBinary& b);

// Compiles `src` as kernel `s` in `precision` ("fp32", "bf16", "fp8") for `arch`; `cache_dir`
// "" means no cache (the lab passes nvrtc/ in laptime's cache folder, trace/read/sidecars.h). Never throws for the file's own faults: `compiled` false with the log or
// the problem.
TryBinary compile_try(const TrySignature& s, const TrySource& src, const std::string& precision,
                      const std::string& arch, const std::string& cache_dir);

}  // namespace laptime::lab
