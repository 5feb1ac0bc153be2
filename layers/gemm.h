// A cuBLASLt matrix product planned once: descriptors, layouts and the heuristic's algorithm
// are chosen at construction (model build), run() only enqueues.
//
// Everything in laptime is row-major; cuBLASLt is column-major. A row-major [R, C] matrix is
// a column-major [C, R] one, so the row-major product D = A · op(B) is computed as the
// column-major Dᵀ = op(B)ᵀ · Aᵀ: cuBLASLt's "A" is our B and its "B" is our A, with m = N,
// n = M, k = K. No data moves; only the roles swap.
//
// Beside cuBLASLt's candidates a plan may hold CUTLASS's sm_90a kernels for the same product
// (layers/cutlass/cutlass_gemm.h: bf16 and fp8 operands, B as NK, the bias / GELU+bias epilogues,
// one product a call): autotune() times them with cuBLASLt's and keeps the fastest of all, so a
// CUTLASS kernel runs only where it measured faster on the real shape. Without autotune() run()
// stays on cuBLASLt's heuristic pick.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cublasLt.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/timing.h"
#include "layers/cutlass/cutlass_gemm.h"

namespace laptime {

// Layout of the right-hand operand B of D[M, N] = A[M, K] · op(B).
//   NK: B is [N, K] and is used transposed (nn.Linear's weight [out, in]; keys in Q·Kᵀ).
//   KN: B is [K, N] and is used as is (V in P·V).
enum class BLayout { NK, KN };

// Bias: D += bias[N] broadcast over rows. BiasRelu: D = max(0, alpha·A·op(B) + beta·C + bias),
// the ReLU applied last (ResNet's 1×1 convolutions, the residual as beta·C). GeluBias:
// D = gelu(A·op(B) + bias), cuBLASLt's GELU_BIAS epilogue (the tanh form, GPT-2's `gelu_new`);
// with it, beta must be 0.
enum class Epilogue { None, Bias, BiasRelu, GeluBias };

struct GemmSpec {
  int M = 0, N = 0, K = 0;
  BLayout b_layout = BLayout::NK;
  DType ab_dtype = DType::F32;            // A and B (F32, BF16, F16 around tf32's fp16 attention core, F8E4M3)
  DType d_dtype = DType::F32;             // C and D (F32, BF16 or F16; F8E4M3 after F8E4M3 operands, then C
                                          // and the bias are BF16); the bias has D's type otherwise
  Precision precision = Precision::FP32;  // FP32 forbids TF32; TF32 allows it; BF16 accumulates in fp32
  Epilogue epilogue = Epilogue::None;
  int64_t ldd = 0;  // row stride of D in elements; 0 means N (dense)
  // Strided batch: `batch` products, operand i at base + i * stride (in elements).
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  // Which of cuBLASLt's heuristic results, best first, to use: callers that time the
  // candidates at build try 0, 1, 2...; the constructor throws when there are fewer.
  int algo_index = 0;
  // F8E4M3 operands (cuBLASLt's fp8 path, sm_89+; B must be NK, cuBLASLt's "TN"): device
  // pointers to the per-tensor scales, D = a_scale · b_scale · A · op(B) [+ bias] + beta · C,
  // then, for an F8E4M3 D, · d_scale before the conversion. Read at every run, so they may be
  // written after the plan is made (calibration). fp8_fast_accum: cuBLASLt's FAST_ACCUM (no
  // periodic promotion of the tensor cores' partial sums to fp32: faster, less accurate).
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
  bool fp8_fast_accum = false;
};

class Gemm {
 public:
  Gemm(cublasLtHandle_t handle, const GemmSpec& spec, std::size_t workspace_bytes);
  ~Gemm();
  Gemm(Gemm&& o) noexcept;
  Gemm& operator=(Gemm&&) = delete;
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // D = alpha · A · op(B) [+ bias] + beta · D. With beta = 1 the product accumulates into D
  // (how the residual add is fused into the projection GEMMs).
  // c: the C operand when it is not D (same layout as D); nullptr means D itself.
  void run(const Context& ctx, void* d, const void* a, const void* b, const void* bias = nullptr, float alpha = 1.f,
           float beta = 0.f, const void* c = nullptr) const;

  const GemmSpec& spec() const { return spec_; }

  // The heuristic's ranked candidates (up to kMaxCandidates; run() uses the first unless
  // autotune() chose another), then the CUTLASS kernels that can run this spec on this GPU,
  // each with every schedule of cutlass_schedules(). Build time only, like everything below.
  static constexpr int kMaxCandidates = 8;
  int candidate_count() const { return static_cast<int>(candidates_.size() + cutlass_.size()); }
  int cutlass_candidate_count() const { return static_cast<int>(cutlass_.size()); }
  // Times every candidate on these operands with time_candidate (core/timing.h: on
  // ctx.stream(), inside a CUDA graph, the GPU's time alone, or launched directly as an eager
  // loop launches them; synchronizes) and keeps the fastest. Returns its index; *best_ms gets
  // its time. Operands as for run(), with beta = 0.
  int autotune(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float* best_ms,
               CandidateLaunch launch = CandidateLaunch::Graph);

  // What run() enqueues: cuBLASLt's `algo`, or, when `cutlass` is set, that kernel with its schedule.
  struct Choice {
    cublasLtMatmulAlgo_t algo{};
    const CutlassGemmKernel* cutlass = nullptr;
    CutlassSchedule schedule;
  };
  Choice choice() const { return {algo_, cutlass_kernel_, cutlass_schedule_}; }
  void set_choice(const Choice& c);
  // Candidate i of candidate_count() (cuBLASLt's first, then CUTLASS's).
  Choice candidate(int i) const;
  // "cuBLASLt" or "CUTLASS <kernel>, <schedule>": what run() enqueues (plan lines, the probe).
  std::string backend() const;

 private:
  GemmSpec spec_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;  // cuBLASLt's A, B, C=D
  cublasLtMatrixLayout_t c_ = nullptr;  // C when its type is not D's (BF16 beside an F8E4M3 D), else nullptr
  cublasLtMatmulAlgo_t algo_{};
  std::vector<cublasLtMatmulAlgo_t> candidates_;  // heuristic order
  struct CutlassCandidate {
    const CutlassGemmKernel* kernel;
    CutlassSchedule schedule;
  };
  std::vector<CutlassCandidate> cutlass_;              // kernels that accept this spec
  const CutlassGemmKernel* cutlass_kernel_ = nullptr;  // chosen: run() enqueues it instead of algo_
  CutlassSchedule cutlass_schedule_;
  mutable CutlassLaunchCache cutlass_cache_;  // its prepared launch, for the last operands
  void find_cutlass(std::size_t workspace_bytes);
  void run_cutlass(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float alpha, float beta,
                   const void* c) const;
};

}  // namespace laptime
