// CUTLASS's Hopper GEMMs beside cuBLASLt: warp-specialized TMA + wgmma kernels (CUTLASS 3.x
// collective builders) whose epilogue is a visitor tree we pick, compiled for sm_90a only, one
// instantiation per translation unit (written from layers/cutlass/cutlass.cmake's table). This header names no CUTLASS type,
// so layers/gemm.cpp (host C++) can hold one as a candidate beside cuBLASLt's algorithms.
//
// What every kernel computes, in cuBLASLt's own terms (layers/gemm.h), so either can replace
// the other in a plan:
//   Z = s_a · s_b · (A · Bᵀ) + bias + beta · C          (fp32; s_a, s_b 1 unless fp8 scales)
//   D = act(Z)                                          (bf16 D)
//   D = e4m3(act(Z) · d_scale), saturated to ±448       (e4m3 D: the next layer's 1/s)
// act: identity (CutlassEpilogue::Bias), GELU's tanh form (GeluBias, GPT-2's gelu_new) or ReLU
// (ReluBias: ResNet-50's conv3, whose C is the e4m3 residual stream: below).
// A [M, K] row-major (activations), B [N, K] row-major (nn.Linear's weight [out, in], used
// transposed: CUTLASS's "TN"), C and D [M, N] with row stride ldd, C bf16 (the residual: C may
// be D itself, read when beta != 0), bias [N] bf16 or none. The residual-stream kernels
// (c_dtype() F8E4M3: ResNet-50's e4m3 blocks, layers/resnet50/e4m3_block.h) read an e4m3 C, its real value
// c_scale · C, beside their e4m3 D: Z = A·Bᵀ + bias + beta · c_scale · C, D = e4m3(relu(Z) · d_scale);
// no Gemm plan is offered them (a plan's C is bf16). fp32 accumulation; the fp8 kernels the build
// holds leave the whole sum to the tensor cores' own accumulator (fast_accum(), cuBLASLt's
// CUBLASLT_MATMUL_DESC_FAST_ACCUM) and are offered only to a plan that asks for it
// (GemmSpec::fp8_fast_accum, on by default: LAPTIME_FP8_FAST_ACCUM); the template also makes the
// kernels that promote partial sums to fp32 every 4 k-blocks, which the build no longer compiles
// (layers/cutlass/cutlass.cmake: an `off` plan chooses among cuBLASLt's promoted algorithms).
//
// Who chooses: Gemm::autotune (layers/gemm.h) times these beside cuBLASLt's candidates on the
// real shape and keeps the fastest; without timing nothing here runs. A build without sm_90
// code, or without the CUTLASS headers (CMake says which), holds none; a GPU other than
// compute capability 9.0 is offered none (sm_90a code runs there alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "core/dtype.h"

namespace laptime {

enum class CutlassEpilogue { Bias, GeluBias, ReluBias };

struct CutlassGemmArgs {
  int M = 0, N = 0, K = 0;
  float alpha = 1.f;        // Z = alpha · s_a · s_b · A·Bᵀ + ...
  const void* a = nullptr;  // [M, K] row-major, the kernel's AB type
  const void* b = nullptr;  // [N, K] row-major
  void* d = nullptr;        // [M, N], row stride ldd, the kernel's D type
  int64_t ldd = 0;          // 0: N
  const void* c = nullptr;  // [M, N] of the kernel's C type, row stride ldd; read when beta != 0 (may be d)
  float beta = 0.f;
  const void* bias = nullptr;      // [N] bf16, or nullptr (none)
  const float* a_scale = nullptr;  // device scalars, fp8 kernels only; nullptr: 1
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;  // e4m3 D only
  const float* c_scale = nullptr;  // e4m3 C only: C's real value is c_scale · C; nullptr: 1
};

// A compiled kernel's run-time knobs: the persistent scheduler's raster order and swizzle
// (how consecutive tiles walk the output, which decides L2 reuse). No recompilation.
enum class CutlassRaster { Heuristic, AlongM, AlongN };
struct CutlassSchedule {
  CutlassRaster raster = CutlassRaster::Heuristic;
  int swizzle = 1;  // 1, 2, 4 or 8
};
std::string schedule_name(const CutlassSchedule& s);  // "along N, swizzle 4"

// The launch parameters a kernel prepared for one set of arguments (TMA descriptors are
// encoded on the host), kept by the caller so that a repeated call only launches. `owner` is the
// kernel that prepared them: a plan timing several kernels through one cache must not have one
// kernel launch another's parameters (each kernel's are a type of its own; read as another's, the
// launch hangs on TMA barriers that never fill: seen on the H200 when the last kernel timed had the
// winner's arguments and schedule).
struct CutlassLaunchCache {
  std::shared_ptr<void> prepared;
  const void* owner = nullptr;
};

class CutlassGemmKernel {
 public:
  virtual ~CutlassGemmKernel() = default;
  virtual std::string name() const = 0;  // "bf16 128x256x64 2x1 cooperative, bias"
  virtual DType ab_dtype() const = 0;    // BF16 or F8E4M3
  virtual DType d_dtype() const = 0;     // BF16 or F8E4M3
  virtual bool has_c() const = 0;        // reads a C (beta != 0); an e4m3 D of GPT-2's kernels has none
  virtual DType c_dtype() const = 0;     // BF16, or F8E4M3 (the residual-stream kernels); with has_c()
  virtual CutlassEpilogue epilogue() const = 0;
  virtual bool fast_accum() const = 0;  // fp8 without the periodic fp32 promotion
  // "" when the kernel can run these arguments (alignment, shape); else why not. Pointers may
  // be null here (a plan is checked before its operands exist).
  virtual std::string refusal(const CutlassGemmArgs& args) const = 0;
  virtual std::size_t workspace_bytes(const CutlassGemmArgs& args, const CutlassSchedule& s) const = 0;
  // Enqueues D on `stream`. Throws Error when CUTLASS refuses the arguments or the launch fails.
  virtual void run(const CutlassGemmArgs& args, const CutlassSchedule& s, CutlassLaunchCache& cache, void* workspace,
                   std::size_t workspace_bytes, cudaStream_t stream) const = 0;
};

// The kernels this build holds that can run on `device` (compute capability 9.0); empty on
// other GPUs, in a build without them, and with LAPTIME_CUTLASS=off (every GEMM on cuBLASLt: the
// A/B baseline; a word other than auto or off throws a sentence).
std::vector<const CutlassGemmKernel*> cutlass_gemm_kernels(int device);
// Every kernel this build compiled, whatever the GPU (names, tests' parameters); empty when CMake
// built none (no sm_90 asked for, or no CUTLASS headers).
std::vector<const CutlassGemmKernel*> cutlass_built_kernels();
bool cutlass_in_build();
// The run-time knobs each kernel is tried with when a plan times its candidates.
std::vector<CutlassSchedule> cutlass_schedules();

}  // namespace laptime
