// A cuBLASLt matrix product planned once: descriptors, layouts and the heuristic's algorithm
// are chosen at construction (model build), run() only enqueues.
//
// Everything in laptime is row-major; cuBLASLt is column-major. A row-major [R, C] matrix is
// a column-major [C, R] one, so the row-major product D = A · op(B) is computed as the
// column-major Dᵀ = op(B)ᵀ · Aᵀ: cuBLASLt's "A" is our B and its "B" is our A, with m = N,
// n = M, k = K. No data moves; only the roles swap.
#pragma once

#include <cstdint>
#include <vector>

#include <cublasLt.h>

#include "core/context.h"
#include "core/dtype.h"

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
  DType ab_dtype = DType::F32;   // A and B (F32, BF16, F16 around tf32's fp16 attention core, F8E4M3)
  DType d_dtype = DType::F32;    // C and D (F32, BF16 or F16; F8E4M3 after F8E4M3 operands, then C
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
  void run(const Context& ctx, void* d, const void* a, const void* b, const void* bias = nullptr,
           float alpha = 1.f, float beta = 0.f, const void* c = nullptr) const;

  const GemmSpec& spec() const { return spec_; }

  // The heuristic's ranked candidates (up to kMaxCandidates; run() uses the first unless
  // autotune() chose another). Build time only, like everything below.
  static constexpr int kMaxCandidates = 8;
  int candidate_count() const { return static_cast<int>(candidates_.size()); }
  // Times every candidate on these operands with time_candidate (core/timing.h: on
  // ctx.stream(), inside a CUDA graph, the GPU's time alone; synchronizes) and keeps the
  // fastest. Returns its index; *best_ms gets its time. Operands as for run(), with beta = 0.
  int autotune(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float* best_ms);
  const cublasLtMatmulAlgo_t& algo() const { return algo_; }
  void set_algo(const cublasLtMatmulAlgo_t& algo) { algo_ = algo; }

 private:
  GemmSpec spec_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;  // cuBLASLt's A, B, C=D
  cublasLtMatrixLayout_t c_ = nullptr;  // C when its type is not D's (BF16 beside an F8E4M3 D), else nullptr
  cublasLtMatmulAlgo_t algo_{};
  std::vector<cublasLtMatmulAlgo_t> candidates_;  // heuristic order
};

}  // namespace laptime
