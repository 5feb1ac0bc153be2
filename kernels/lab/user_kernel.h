// A learner's kernel file, compiled (kernels/lab/try_compile.h) and loaded into this process as one
// more version of a lab kernel: `laptime lab KERNEL --try FILE.cu` runs it as a rung beside the
// ladder, `laptime bench MODEL --kernel KERNEL=FILE.cu` wherever the model runs that kernel. Once
// added (add_user_version), every table lookup finds it by its version index
// (layernorm_version(index), ...: kernels/lab/launch.cuh), so the lab's cases and the models'
// layers run it as they run the ladder's versions.
//
// A call: the family's arguments in the signature's order (kernels/lab/try_signature.h), the
// launch shape from the file's KERNEL_launch, run on the GPU the first time each shape is seen
// (a sync: the lab's checks and the bench's check at the model's shape come first, so a timed
// loop or a CUDA graph capture only looks it up), checked against the device's limits (a block of
// 1 to 1024 threads, a grid within its bounds, the shared memory a block may have: one sentence
// each), then cudaLaunchKernel; a refused launch is one sentence too.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/lab/registry.h"
#include "kernels/lab/try_signature.h"

namespace laptime::lab {

// One call's arguments in the signature's order, each with its kind.
class CallArgs {
 public:
  CallArgs& pointer(const void* p);
  CallArgs& i32(int v);
  CallArgs& i64(long long v);
  CallArgs& f32(float v);
  std::size_t size() const { return args_.size(); }
  ParamKind kind(std::size_t i) const { return args_[i].kind; }
  // The addresses cudaLaunchKernel takes: one per argument, pointing into this object.
  std::vector<void*> addresses() const;
  // The integers (int and long long), in order: the launch function's arguments before `sms`.
  std::vector<long long> integers() const;

 private:
  struct Arg {
    ParamKind kind;
    alignas(8) unsigned char bytes[8];
  };
  CallArgs& add(ParamKind kind, const void* value, std::size_t size);
  std::vector<Arg> args_;
};

// The launch shape as the file's KERNEL_launch returned it (the template's LaunchShape).
struct LaunchShapeWords {
  unsigned grid[3], block[3];
  unsigned shared_bytes;
};

class UserKernel {
 public:
  // Loads `cubin` (compiled for this device) and finds the kernel and the launch-shape entry;
  // throws Error with one sentence.
  UserKernel(const TrySignature& s, UserVersionInfo info, const std::string& cubin, int device);
  ~UserKernel();
  UserKernel(const UserKernel&) = delete;
  UserKernel& operator=(const UserKernel&) = delete;

  // Enqueues one call on `stream`; throws Error with one sentence (a bad launch shape, a refused
  // launch). The first call of a shape waits for the GPU (kernels/lab/gpu_wait.h).
  void launch(const CallArgs& args, cudaStream_t stream) const;
  // The launch shape of the call `args`, as launch() uses it (computed if not yet known).
  LaunchShapeWords launch_shape(const CallArgs& args, cudaStream_t stream) const;

  const UserVersionInfo& info() const { return info_; }
  const TrySignature& signature() const { return sig_; }

 private:
  std::string call_text(const std::vector<long long>& key) const;  // "layernorm_launch(rows=37, C=771, sms=132)"

  const TrySignature& sig_;
  UserVersionInfo info_;
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr, shape_kernel_ = nullptr;
  int sms_ = 0, max_threads_ = 0, max_block_[3] = {}, max_grid_[3] = {};
  std::size_t max_shared_ = 0;
  mutable std::size_t shared_allowed_ = 48 * 1024;
  mutable std::map<std::vector<long long>, LaunchShapeWords> shapes_;
};

// Adds a loaded file to this process's versions (kernels/lab/registry.h's table): its version
// index, after its kernel's ladder and the files loaded before it.
int add_user_version(std::shared_ptr<const UserKernel> kernel);
// The loaded file at `index` of `kernel`, nullptr when none.
std::shared_ptr<const UserKernel> user_version(const std::string& kernel, int index);

}  // namespace laptime::lab
