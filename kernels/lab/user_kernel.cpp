#include "kernels/lab/user_kernel.h"

#include <cstring>
#include <sstream>

#include "core/buffer.h"
#include "core/check.h"
#include "kernels/lab/gpu_wait.h"
#include "kernels/lab/launch.cuh"

namespace laptime::lab {

// --- CallArgs --------------------------------------------------------------------------------

CallArgs& CallArgs::add(ParamKind kind, const void* value, std::size_t size) {
  Arg a{kind, {}};
  std::memcpy(a.bytes, value, size);
  args_.push_back(a);
  return *this;
}
CallArgs& CallArgs::pointer(const void* p) { return add(ParamKind::Pointer, &p, sizeof p); }
CallArgs& CallArgs::i32(int v) { return add(ParamKind::Int32, &v, sizeof v); }
CallArgs& CallArgs::i64(long long v) { return add(ParamKind::Int64, &v, sizeof v); }
CallArgs& CallArgs::f32(float v) { return add(ParamKind::Float32, &v, sizeof v); }

std::vector<void*> CallArgs::addresses() const {
  std::vector<void*> a;
  for (const Arg& x : args_) a.push_back(const_cast<unsigned char*>(x.bytes));
  return a;
}

std::vector<long long> CallArgs::integers() const {
  std::vector<long long> v;
  for (const Arg& x : args_) {
    if (x.kind == ParamKind::Int32) {
      int i;
      std::memcpy(&i, x.bytes, sizeof i);
      v.push_back(i);
    } else if (x.kind == ParamKind::Int64) {
      long long i;
      std::memcpy(&i, x.bytes, sizeof i);
      v.push_back(i);
    }
  }
  return v;
}

// --- UserKernel ------------------------------------------------------------------------------

namespace {

std::size_t kind_size(ParamKind k) { return k == ParamKind::Int32 || k == ParamKind::Float32 ? 4 : 8; }

std::string cuda_words(cudaError_t e) { return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")"; }

}  // namespace

UserKernel::UserKernel(const TrySignature& s, UserVersionInfo info, const std::string& cubin, int device)
    : sig_(s), info_(std::move(info)) {
  const std::string who = info_.file;
  cudaError_t e = cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    library_ = nullptr;
    throw Error(who + "'s compiled code could not be loaded on this GPU: " + cuda_words(e) + ".");
  }
  if ((e = cudaLibraryGetKernel(&kernel_, library_, s.kernel.c_str())) != cudaSuccess ||
      (e = cudaLibraryGetKernel(&shape_kernel_, library_, launch_shape_entry())) != cudaSuccess) {
    cudaGetLastError();
    cudaLibraryUnload(library_);
    throw Error(who + "'s kernel " + s.kernel + " could not be found in its compiled code: " + cuda_words(e) + ".");
  }
  // The parameters as the loaded code declares them: the sizes the lab passes (the PTX check
  // before the cache saw their count and kinds; this sees what was actually loaded). Only the
  // declared ones are asked for: a probe past the last is an error the sanitizer would report.
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    std::size_t offset = 0, size = 0;
    const cudaError_t p = cudaFuncGetParamInfo(reinterpret_cast<const void*>(kernel_), i, &offset, &size);
    if (p == cudaErrorNotSupported || (i == 0 && p != cudaSuccess)) {
      cudaGetLastError();
      break;  // a driver that cannot tell: the PTX check stands
    }
    if (p != cudaSuccess || size != kind_size(s.params[i].kind)) {
      cudaGetLastError();
      cudaLibraryUnload(library_);
      throw Error(who + "'s compiled kernel " + s.kernel +
                  " does not take the parameters the lab passes: " + s.kernel_declaration() + ".");
    }
  }
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  sms_ = p.multiProcessorCount;
  max_threads_ = p.maxThreadsPerBlock;
  for (int d = 0; d < 3; ++d) max_block_[d] = p.maxThreadsDim[d], max_grid_[d] = p.maxGridSize[d];
  max_shared_ = p.sharedMemPerBlockOptin;
}

UserKernel::~UserKernel() {
  if (library_) cudaLibraryUnload(library_);
}

std::string UserKernel::call_text(const std::vector<long long>& key) const {
  std::ostringstream os;
  os << sig_.launch_name() << "(";
  const std::vector<TryParam> names = sig_.launch_params();
  for (std::size_t i = 0; i < key.size() && i < names.size(); ++i)
    os << (i ? ", " : "") << names[i].name << "=" << key[i];
  os << ")";
  return os.str();
}

LaunchShapeWords UserKernel::launch_shape(const CallArgs& a, cudaStream_t stream) const {
  std::vector<long long> key = a.integers();
  key.push_back(sms_);
  if (const auto it = shapes_.find(key); it != shapes_.end()) return it->second;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  require(capturing == cudaStreamCaptureStatusNone,
          info_.file + ": " + call_text(key) +
              " was not run before this CUDA graph capture: a shape is prepared by a call outside it (the bench's "
              "check at the model's shape).");
  // The launch function on the GPU: laptime_launch_shape(LaunchShape*, the integers..., sms).
  DeviceBuffer out(sizeof(LaunchShapeWords));
  CallArgs shape_args;
  shape_args.pointer(out.data());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::vector<void*> at = a.addresses();
    if (a.kind(i) == ParamKind::Int32) shape_args.i32(*static_cast<const int*>(at[i]));
    if (a.kind(i) == ParamKind::Int64) shape_args.i64(*static_cast<const long long*>(at[i]));
  }
  shape_args.i32(sms_);
  std::vector<void*> addresses = shape_args.addresses();
  CUDA_CHECK(
      cudaLaunchKernel(reinterpret_cast<const void*>(shape_kernel_), dim3(1), dim3(1), addresses.data(), 0, stream));
  LaunchShapeWords w{};
  CUDA_CHECK(cudaMemcpyAsync(&w, out.data(), sizeof w, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(wait_stream(stream));
  const std::string call = info_.file + ": " + call_text(key);
  const auto dims = [](const unsigned* v) {
    return std::to_string(v[0]) + " x " + std::to_string(v[1]) + " x " + std::to_string(v[2]);
  };
  const unsigned long long threads = 1ull * w.block[0] * w.block[1] * w.block[2];
  if (threads == 0 || threads > static_cast<unsigned long long>(max_threads_))
    throw Error(call + " asked for a block of " + dims(w.block) + " threads; a block holds 1 to " +
                std::to_string(max_threads_) + ".");
  for (int d = 0; d < 3; ++d) {
    if (w.block[d] > static_cast<unsigned>(max_block_[d]))
      throw Error(call + " asked for a block of " + dims(w.block) + " threads; this GPU's block is at most " +
                  std::to_string(max_block_[0]) + " x " + std::to_string(max_block_[1]) + " x " +
                  std::to_string(max_block_[2]) + ".");
    if (w.grid[d] == 0 || w.grid[d] > static_cast<unsigned>(max_grid_[d]))
      throw Error(call + " asked for a grid of " + dims(w.grid) + " blocks; each side of a grid is 1 to " +
                  std::to_string(max_grid_[0]) + " x " + std::to_string(max_grid_[1]) + " x " +
                  std::to_string(max_grid_[2]) + ".");
  }
  if (w.shared_bytes > max_shared_)
    throw Error(call + " asked for " + std::to_string(w.shared_bytes) +
                " bytes of shared memory; this GPU gives a block at most " + std::to_string(max_shared_) + ".");
  shapes_[key] = w;
  return w;
}

void UserKernel::launch(const CallArgs& a, cudaStream_t stream) const {
  require(a.size() == sig_.params.size(), "internal: a call of " + info_.file + " with the wrong count of arguments.");
  for (std::size_t i = 0; i < a.size(); ++i)
    require(a.kind(i) == sig_.params[i].kind,
            "internal: a call of " + info_.file + " with an argument of another kind.");
  const LaunchShapeWords w = launch_shape(a, stream);
  if (w.shared_bytes > shared_allowed_) {
    const cudaError_t e =
        cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel_), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(w.shared_bytes));
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(info_.file + ": " + sig_.kernel + " could not be given " + std::to_string(w.shared_bytes) +
                  " bytes of shared memory: " + cuda_words(e) + ".");
    }
    shared_allowed_ = w.shared_bytes;
  }
  std::vector<void*> addresses = a.addresses();
  const cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(w.grid[0], w.grid[1], w.grid[2]),
                       dim3(w.block[0], w.block[1], w.block[2]), addresses.data(), w.shared_bytes, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();  // a refused launch is not sticky
    throw Error(info_.file + ": the launch of " + sig_.kernel + " (grid " + std::to_string(w.grid[0]) + " x " +
                std::to_string(w.grid[1]) + " x " + std::to_string(w.grid[2]) + ", block " +
                std::to_string(w.block[0]) + " x " + std::to_string(w.block[1]) + " x " + std::to_string(w.block[2]) +
                ", " + std::to_string(w.shared_bytes) + " bytes of shared memory) was refused: " + cuda_words(e) + ".");
  }
}

// --- the process's loaded files --------------------------------------------------------------

namespace {

// Process-wide, as the registry's table of their names (registry.h): the loaded code is the
// process's, like a compiled kernel's.
std::map<std::pair<std::string, int>, std::shared_ptr<const UserKernel>>& loaded() {
  static std::map<std::pair<std::string, int>, std::shared_ptr<const UserKernel>> table;
  return table;
}

}  // namespace

int add_user_version(std::shared_ptr<const UserKernel> kernel) {
  const int index = add_user_version_info(kernel->info());
  loaded()[{kernel->info().kernel, index}] = std::move(kernel);
  return index;
}

std::shared_ptr<const UserKernel> user_version(const std::string& kernel, int index) {
  const auto it = loaded().find({kernel, index});
  return it == loaded().end() ? nullptr : it->second;
}

// --- each family's arguments in the signature's order (kernels/lab/try_signature.cpp) ---------

namespace {

CallArgs call_args(const LayerNormArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.in).pointer(a.weight).pointer(a.bias).i32(a.rows).i32(a.C).f32(a.eps);
}
CallArgs call_args(const BiasGeluArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.in).pointer(a.bias).i32(a.rows).i32(a.C);
}
CallArgs call_args(const AttentionArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.qkv).i32(a.B).i32(a.T).i32(a.H).i32(a.hd);
}
CallArgs call_args(const EmbeddingArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.tokens).pointer(a.wte).pointer(a.wpe).i32(a.B).i32(a.T).i32(a.C);
}
CallArgs call_args(const ResidualArgs& a) { return CallArgs().pointer(a.out).pointer(a.x).pointer(a.r).i64(a.n); }
CallArgs call_args(const ResidualLayerNormArgs& a) {
  return CallArgs()
      .pointer(a.x_out)
      .pointer(a.y)
      .pointer(a.x)
      .pointer(a.r)
      .pointer(a.weight)
      .pointer(a.bias)
      .i32(a.rows)
      .i32(a.C)
      .f32(a.eps);
}
CallArgs call_args(const QuantizeArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.inv_scale).pointer(a.in).i64(a.n);
}
CallArgs call_args(const AmaxArgs& a) { return CallArgs().pointer(a.amax).pointer(a.in).i64(a.n); }
CallArgs call_args(const MaxPoolArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.in).i32(a.N).i32(a.H).i32(a.W).i32(a.C);
}
CallArgs call_args(const AvgPoolArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.in).i32(a.N).i32(a.H).i32(a.W).i32(a.C);
}
CallArgs call_args(const StemArgs& a) {
  return CallArgs().pointer(a.out).pointer(a.in).pointer(a.weight).pointer(a.bias).i32(a.N).i32(a.Hs).i32(a.C);
}
CallArgs call_args(const ConvEpilogueArgs& a) {
  return CallArgs().pointer(a.y).pointer(a.bias).pointer(a.residual).i64(a.rows).i32(a.C).i32(a.relu ? 1 : 0);
}

template <class Args>
Launch<Args> launcher(const char* kernel, int index) {
  std::shared_ptr<const UserKernel> k = user_version(kernel, index);
  if (!k) return {};
  return [k](const Args& a, cudaStream_t stream) { k->launch(call_args(a), stream); };
}

}  // namespace

template <>
Launch<LayerNormArgs> user_version_launch(int index) {
  return launcher<LayerNormArgs>("layernorm", index);
}
template <>
Launch<BiasGeluArgs> user_version_launch(int index) {
  return launcher<BiasGeluArgs>("bias_gelu", index);
}
template <>
Launch<AttentionArgs> user_version_launch(int index) {
  return launcher<AttentionArgs>("attention", index);
}
template <>
Launch<EmbeddingArgs> user_version_launch(int index) {
  return launcher<EmbeddingArgs>("embedding", index);
}
template <>
Launch<ResidualArgs> user_version_launch(int index) {
  return launcher<ResidualArgs>("residual", index);
}
template <>
Launch<ResidualLayerNormArgs> user_version_launch(int index) {
  return launcher<ResidualLayerNormArgs>("residual_layernorm", index);
}
template <>
Launch<QuantizeArgs> user_version_launch(int index) {
  return launcher<QuantizeArgs>("quantize", index);
}
template <>
Launch<AmaxArgs> user_version_launch(int index) {
  return launcher<AmaxArgs>("amax", index);
}
template <>
Launch<MaxPoolArgs> user_version_launch(int index) {
  return launcher<MaxPoolArgs>("maxpool", index);
}
template <>
Launch<AvgPoolArgs> user_version_launch(int index) {
  return launcher<AvgPoolArgs>("avgpool", index);
}
template <>
Launch<StemArgs> user_version_launch(int index) {
  return launcher<StemArgs>("stem", index);
}
template <>
Launch<ConvEpilogueArgs> user_version_launch(int index) {
  return launcher<ConvEpilogueArgs>("conv_epilogue", index);
}

}  // namespace laptime::lab
