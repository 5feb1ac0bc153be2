// The execution context: the stream every launch goes to, the library handles bound to
// that stream, the shared workspace, and the NVTX level. Passed by reference to every
// forward(); there are no globals.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/buffer.h"
#include "core/nvtx.h"

namespace laptime {

// Which stream the context runs on.
//   Created: a non-blocking stream owned by the context (the default; needed for graph capture).
//   Legacy:  the legacy default stream (stream 0), as many simple programs use.
enum class StreamKind { Created, Legacy };

class Context {
 public:
  // Selects `device`, creates the stream and the cuBLASLt handle. Throws Error when there is
  // no usable GPU. cuDNN's handle is created on first use (ResNet-50's convolutions,
  // GPT-2's cuDNN attention).
  explicit Context(int device = 0, StreamKind stream = StreamKind::Created, NvtxLevel nvtx = NvtxLevel::Layer);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  const cudaDeviceProp& props() const { return props_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  cudnnHandle_t cudnn();  // created and bound to stream() on first call

  NvtxLevel nvtx_level() const { return nvtx_; }

  // Runs at the end of every layer's range, inside it. Empty by default. Only the bench's
  // `--pitfall sync` demo sets one (a host read-back after each layer, the classic mistake);
  // the models never synchronize on their own. Must not throw: it runs in a destructor.
  void set_layer_end_hook(std::function<void()> hook) { layer_end_hook_ = std::move(hook); }
  const std::function<void()>& layer_end_hook() const { return layer_end_hook_; }

  // One workspace shared by cuBLASLt and cuDNN (their calls are serialized on stream()).
  // Layers ask for what they need at build time; forward() only reads the pointer.
  void reserve_workspace(std::size_t bytes);
  void* workspace() const { return workspace_.data(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }

  // cuBLASLt's recommended workspace on Hopper.
  static constexpr std::size_t kCublasLtWorkspace = 32u << 20;

 private:
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  DeviceBuffer workspace_;
  NvtxLevel nvtx_ = NvtxLevel::Layer;
  std::function<void()> layer_end_hook_;
};

// True when a CUDA device can be used; fills `why` with the reason when not. Tests use this
// to skip with a visible reason.
bool gpu_available(std::string* why = nullptr);

}  // namespace laptime
