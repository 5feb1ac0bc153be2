// LayerNorm forward.
//
// One warp per row: C is a few hundred to a few thousand, so a warp's 32 lanes stride the
// row, the reductions stay inside the warp (shuffles, no shared memory, no block barrier),
// and 8 rows per 256-thread block keep enough warps in flight to hide memory latency.
// The row is read three times (mean, variance, output); the second and third reads hit L1
// for rows of the sizes GPT-2 uses. Variance is computed around the mean (two-pass), not as
// E[x²] - mean², which cancels catastrophically in fp32 when |mean| >> std.
//
// The fast path (row widths that are whole 16-byte vectors, up to kMaxVecPerLane of them per
// lane: C <= 2048 in bf16, <= 1024 in fp32, 16-byte aligned rows) reads the row from memory
// once, with 16-byte loads, into registers, and does all three passes there: one read and one
// write of the activations, the bandwidth floor (GPT-2 small, bf16, 8192 x 768: 25 MB moved).
// Its register array is sized to the row (NV vectors a lane, an instantiation per NV: 3 for
// GPT-2's bf16 rows), so a narrow row does not pay the widest row's registers in occupancy
// (layernorm_registers.cuh). The general kernel above it stays for every other shape.
// Both can write a narrower type than they read (To): fp32 in, fp16 out feeds tf32's fp16
// attention projections straight from the LayerNorm (layers/gpt2/attention.h), with no conversion pass;
// bf16 in, e4m3 out (times the consumer's inverse scale, saturated) feeds fp8's GEMMs the same
// way: the statistics stay fp32 and only the normalised output is rounded to fp8, which is what
// the GEMM would have read after a separate quantization pass.
#include "kernels/layernorm.cuh"

#include <map>
#include <mutex>
#include <utility>

#include "core/check.h"
#include "kernels/common.cuh"
#include "kernels/layernorm_registers.cuh"

namespace laptime {
namespace {

constexpr int kWarpsPerBlock = 8;

template <class T, class To>
__global__ void layernorm_kernel(To* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight,
                                 const T* __restrict__ bias, int rows, int C, float eps,
                                 const float* __restrict__ out_scale) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* x = in + static_cast<size_t>(row) * C;
  To* y = out + static_cast<size_t>(row) * C;

  float sum = 0.f;
  for (int c = lane; c < C; c += 32) sum += to_f32(x[c]);
  const float mean = warp_sum(sum) / C;

  float sq = 0.f;
  for (int c = lane; c < C; c += 32) {
    const float d = to_f32(x[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(warp_sum(sq) / C + eps);
  const float qs = out_scale ? *out_scale : 1.f;  // x 1 is exact: other outputs are unchanged

  for (int c = lane; c < C; c += 32) {
    const float n = (to_f32(x[c]) - mean) * rstd;
    y[c] = from_f32<To>((n * to_f32(weight[c]) + to_f32(bias[c])) * qs);
  }
}

constexpr int kMaxVecPerLane = kLayerNormMaxVecPerLane;

// Waits until the kernel before this one on the stream has finished and its writes are visible.
// A no-op unless the kernel was launched as a programmatic dependent (launch_dependent below):
// then its launch and its blocks' scheduling overlap the end of the kernel before (the GEMM whose
// output it normalises), and this is where each block waits for that output.
__device__ __forceinline__ void wait_for_the_kernel_before() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether `kernel`'s code, as it runs on the current device, holds the wait above: only code
// compiled for compute capability 9.0 or newer does (an sm_80 build's PTX, JIT-compiled on a
// Hopper, runs without it), so the kernel's own PTX version decides, not the device's capability.
// Launched as a dependent without the wait, a LayerNorm would read the output of the kernel before
// while it is still being written. Read once per kernel and device (a host lookup, no
// synchronization).
bool waits_for_the_kernel_before(const void* kernel) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, bool> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::pair<const void*, int> key(kernel, device);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const bool waits = attributes.ptxVersion >= 90;
  const std::lock_guard<std::mutex> lock(mutex);
  known.emplace(key, waits);
  return waits;
}

// `kernel` on `stream` as a programmatic dependent of the kernel before it
// (cudaLaunchAttributeProgrammaticStreamSerialization) where its code waits for that kernel itself
// (wait_for_the_kernel_before, compute capability 9.0 and newer); plainly elsewhere.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = waits_for_the_kernel_before(reinterpret_cast<const void*>(kernel)) ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

// Elements of T in one 16-byte vector, the fast path's unit.
template <class T>
constexpr int kVecOf = 16 / sizeof(T);

// Whether a row of C elements of T takes the fast path: whole 16-byte vectors, at most
// kMaxVecPerLane of them a lane (the pointers' alignment is the launcher's other condition).
template <class T>
constexpr bool fits_registers(int C) {
  return C > 0 && C % kVecOf<T> == 0 && C / kVecOf<T> <= 32 * kMaxVecPerLane;
}

// The launch bound's blocks an SM for NV vectors a lane: 8 (one wave of GPT-2's rows) where a lane
// holds at most 3 vectors, else 1.
template <int NV>
constexpr int kOneWaveBlocks = NV <= 3 ? 8 : 1;

// NV: the vectors a lane holds (the row's, or kMaxVecPerLane for the lab's v3); Row: how they are
// held (layernorm_registers.cuh). MinBlocks: the launch bound's blocks an SM, 8 for one wave of rows
// (ptxas then caps a thread at 32 registers).
template <class T, class To, int NV, int MinBlocks, template <class, int> class Row = PackedRow>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, MinBlocks)
    layernorm_vec_kernel(To* __restrict__ out, const T* __restrict__ in, const T* __restrict__ weight,
                         const T* __restrict__ bias, int rows, int C, float eps, const float* __restrict__ out_scale) {
  wait_for_the_kernel_before();
  constexpr int kVec = kVecOf<T>;
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int n_vec = C / kVec;  // whole vectors in the row, at most 32 · NV; the launcher checked
  const uint4* x = reinterpret_cast<const uint4*>(in + static_cast<size_t>(row) * C);
  Row<T, NV> r;
#pragma unroll
  for (int i = 0; i < NV; ++i)
    if (i * 32 + lane < n_vec) r.set(i, x[i * 32 + lane]);
  layernorm_registers(reinterpret_cast<OutVec<To, kVec>*>(out + static_cast<size_t>(row) * C), r, weight, bias, n_vec,
                      C, eps, out_scale ? *out_scale : 1.f, lane);
}

// The kernel a shape runs (laptime lab's layernorm versions v2-v6; Auto is production).
//   General          the general kernel whatever the shape (v2)
//   WidestRegisters  the fast path with registers for the widest row whatever C is (v3)
//   SizedRegisters   the fast path, its registers sized to the row (v4)
//   OneWave          v4 asking ptxas for 8 blocks an SM where the row is at most 3 vectors a lane
//                    (GPT-2's bf16 rows): 32 registers a thread and a 12-byte spill, so GPT-2's
//                    8192 rows run as one wave of warps (v5)
//   Dependent        v5 launched as a programmatic dependent of the kernel before it where its
//                    code waits for that kernel (launch_dependent: sm_90 code), plainly elsewhere
//                    (v6, production)
enum class Path { Auto, General, WidestRegisters, SizedRegisters, OneWave, Dependent };

template <class T, class To>
void launch(To* out, const T* in, const T* weight, const T* bias, int rows, int C, float eps, const float* out_scale,
            cudaStream_t stream, Path path = Path::Auto) {
  const bool aligned = (reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in) |
                        reinterpret_cast<uintptr_t>(weight) | reinterpret_cast<uintptr_t>(bias)) %
                           16 ==
                       0;
  if (path == Path::Auto) path = Path::Dependent;
  const dim3 grid(ceil_div(rows, kWarpsPerBlock)), block(kWarpsPerBlock * 32);
  const bool fast = path != Path::General && aligned && fits_registers<T>(C);
  if (fast && path == Path::WidestRegisters)
    layernorm_vec_kernel<T, To, kMaxVecPerLane, 1, FloatRow>
        <<<grid, block, 0, stream>>>(out, in, weight, bias, rows, C, eps, out_scale);
  else if (fast)
    with_vecs_per_lane(C / kVecOf<T>, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      constexpr int kOneWave = kOneWaveBlocks<NV>;
      if (path == Path::SizedRegisters)
        layernorm_vec_kernel<T, To, NV, 1><<<grid, block, 0, stream>>>(out, in, weight, bias, rows, C, eps, out_scale);
      else if (path == Path::Dependent)
        launch_dependent(layernorm_vec_kernel<T, To, NV, kOneWave>, grid, block, stream, out, in, weight, bias, rows, C,
                         eps, out_scale);
      else
        layernorm_vec_kernel<T, To, NV, kOneWave>
            <<<grid, block, 0, stream>>>(out, in, weight, bias, rows, C, eps, out_scale);
    });
  else
    layernorm_kernel<T, To><<<ceil_div(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
        out, in, weight, bias, rows, C, eps, out_scale);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void layernorm_forward(DType dtype, void* out, const void* in, const void* weight, const void* bias, int rows, int C,
                       float eps, cudaStream_t stream) {
  layernorm_forward(dtype, dtype, out, in, weight, bias, rows, C, eps, stream);
}

void layernorm_forward(DType dtype, DType out_dtype, void* out, const void* in, const void* weight, const void* bias,
                       int rows, int C, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  if (dtype == DType::F32 && out_dtype == DType::F16) {
    launch(static_cast<__half*>(out), static_cast<const float*>(in), static_cast<const float*>(weight),
           static_cast<const float*>(bias), rows, C, eps, nullptr, stream);
    return;
  }
  require(out_dtype == dtype, std::string("internal: LayerNorm writes ") + dtype_name(dtype) +
                                  " or, from F32, F16; not " + dtype_name(out_dtype) + ".");
  LAPTIME_DISPATCH_FLOAT(
      dtype, launch(static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), static_cast<const scalar_t*>(weight),
                    static_cast<const scalar_t*>(bias), rows, C, eps, nullptr, stream));
}

bool layernorm_launches_dependent(DType dtype, int C) {
  bool dependent = false;
  LAPTIME_DISPATCH_FLOAT(dtype, {
    if (fits_registers<scalar_t>(C))
      with_vecs_per_lane(C / kVecOf<scalar_t>, [&](auto nv) {
        constexpr int NV = decltype(nv)::value;
        dependent = waits_for_the_kernel_before(
            reinterpret_cast<const void*>(&layernorm_vec_kernel<scalar_t, scalar_t, NV, kOneWaveBlocks<NV>>));
      });
  });
  return dependent;
}

void layernorm_forward_path(LayerNormPath which, DType dtype, void* out, const void* in, const void* weight,
                            const void* bias, int rows, int C, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  const Path path = which == LayerNormPath::General           ? Path::General
                    : which == LayerNormPath::WidestRegisters ? Path::WidestRegisters
                    : which == LayerNormPath::SizedRegisters  ? Path::SizedRegisters
                    : which == LayerNormPath::OneWave         ? Path::OneWave
                                                              : Path::Dependent;
  LAPTIME_DISPATCH_FLOAT(
      dtype, launch(static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), static_cast<const scalar_t*>(weight),
                    static_cast<const scalar_t*>(bias), rows, C, eps, nullptr, stream, path));
}

void layernorm_forward_fp8(void* out, const float* out_inv_scale, DType dtype, const void* in, const void* weight,
                           const void* bias, int rows, int C, float eps, cudaStream_t stream) {
  if (rows == 0) return;
  require(dtype == DType::BF16, std::string("internal: the fp8 LayerNorm reads BF16, not ") + dtype_name(dtype) + ".");
  launch(static_cast<__nv_fp8_e4m3*>(out), static_cast<const __nv_bfloat16*>(in),
         static_cast<const __nv_bfloat16*>(weight), static_cast<const __nv_bfloat16*>(bias), rows, C, eps,
         out_inv_scale, stream);
}

}  // namespace laptime
