#include "layers/gemm.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/check.h"
#include "core/timing.h"

namespace laptime {
namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::F16:
      return CUDA_R_16F;
    case DType::F8E4M3:
      return CUDA_R_8F_E4M3;
    default:
      throw Error(std::string("GEMM operands cannot be ") + dtype_name(t) + ".");
  }
}

// Largest power of two (<= 256) dividing every byte offset a batched operand starts at:
// the heuristic must not assume more alignment than the pointers will have.
uint32_t alignment_bytes(int64_t stride_elems, DType t) {
  const uint64_t stride = static_cast<uint64_t>(stride_elems) * dtype_size(t);
  uint32_t a = 256;
  while (stride && stride % a) a >>= 1;
  return a;
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld, int batch,
                                   int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  if (batch > 1) {
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return l;
}

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::None:
      return "none";
    case Epilogue::Bias:
      return "bias";
    case Epilogue::BiasRelu:
      return "bias+ReLU";
    case Epilogue::GeluBias:
      return "GELU+bias";
  }
  return "?";
}

}  // namespace

Gemm::Gemm(cublasLtHandle_t handle, const GemmSpec& s, std::size_t workspace_bytes) : spec_(s) {
  // TF32 tensor cores for fp32 operands in tf32; 16-bit operands (bf16, or fp16 around tf32's
  // attention core) take the 16-bit tensor cores with fp32 accumulation in every precision.
  const cublasComputeType_t compute =
      s.precision == Precision::TF32 && s.ab_dtype == DType::F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
  // cuBLASLt's A is our B: [N, K] row-major is column-major K x N, used transposed.
  const cublasOperation_t trans_a = s.b_layout == BLayout::NK ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  const cublasLtEpilogue_t epi = s.epilogue == Epilogue::Bias       ? CUBLASLT_EPILOGUE_BIAS
                                 : s.epilogue == Epilogue::BiasRelu ? CUBLASLT_EPILOGUE_RELU_BIAS
                                 : s.epilogue == Epilogue::GeluBias ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                                    : CUBLASLT_EPILOGUE_DEFAULT;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  // An fp8 D takes a BF16 C and bias (cuBLASLt's fp8 type combinations).
  const DType c_dtype = s.d_dtype == DType::F8E4M3 ? DType::BF16 : s.d_dtype;
  if (s.epilogue != Epilogue::None) {
    const cudaDataType_t bias_type = cuda_type(c_dtype);
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
  }
  if (s.ab_dtype == DType::F8E4M3) {  // cuBLASLt's A is our B: the scales swap like the operands
    // A scale pointer 16-byte aligned: cuBLASLt's heuristic accepts a plan whose scale sits at
    // base + 4 and cublasLtMatmul then refuses it with NOT_SUPPORTED (reported by other users of
    // cuBLASLt 12.9+, and what the first H200 probe saw: every Linear fp8 plan, its x scale packed
    // 4 bytes after the weight's, failed to run; laptime_fp8_shapes' aligned scales ran). The
    // plan says so here, at build, instead.
    for (const float* p : {s.a_scale, s.b_scale, s.d_scale})
      if (reinterpret_cast<uintptr_t>(p) % 16) {
        cublasLtMatmulDescDestroy(op_);
        throw Error("internal: an fp8 GEMM's scale pointer must be 16-byte aligned (cuBLASLt refuses it otherwise).");
      }
    const int8_t fast = s.fp8_fast_accum ? 1 : 0;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
    const void* pa = s.b_scale;
    const void* pb = s.a_scale;
    if (pa) CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &pa, sizeof(pa)));
    if (pb) CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &pb, sizeof(pb)));
    if (s.d_dtype == DType::F8E4M3 && s.d_scale) {
      const void* pd = s.d_scale;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &pd, sizeof(pd)));
    }
  }

  const cudaDataType_t ab = cuda_type(s.ab_dtype), dt = cuda_type(s.d_dtype);
  if (s.b_layout == BLayout::NK)
    a_ = make_layout(ab, s.K, s.N, s.K, s.batch, s.stride_b);  // [N, K] row-major
  else
    a_ = make_layout(ab, s.N, s.K, s.N, s.batch, s.stride_b);                // [K, N] row-major
  b_ = make_layout(ab, s.K, s.M, s.K, s.batch, s.stride_a);                  // our A: [M, K] row-major
  d_ = make_layout(dt, s.N, s.M, s.ldd ? s.ldd : s.N, s.batch, s.stride_d);  // D: [M, N] row-major
  if (c_dtype != s.d_dtype) c_ = make_layout(cuda_type(c_dtype), s.N, s.M, s.ldd ? s.ldd : s.N, s.batch, s.stride_d);
  cublasLtMatrixLayout_t c_layout = c_ ? c_ : d_;

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof(workspace_bytes)));
  const uint32_t align_a = alignment_bytes(s.batch > 1 ? s.stride_b : 0, s.ab_dtype);
  const uint32_t align_b = alignment_bytes(s.batch > 1 ? s.stride_a : 0, s.ab_dtype);
  const uint32_t align_d = std::min(alignment_bytes(s.batch > 1 ? s.stride_d : 0, s.d_dtype),
                                    alignment_bytes(s.ldd ? s.ldd : s.N, s.d_dtype));
  const uint32_t align_c =
      std::min(alignment_bytes(s.batch > 1 ? s.stride_d : 0, c_dtype), alignment_bytes(s.ldd ? s.ldd : s.N, c_dtype));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a,
                                                    sizeof(align_a)));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b,
                                                    sizeof(align_b)));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c,
                                                    sizeof(align_c)));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d,
                                                    sizeof(align_d)));

  // The ranked list: run() uses the one at s.algo_index (0: the heuristic's first) unless
  // autotune() picks another.
  cublasLtMatmulHeuristicResult_t results[kMaxCandidates] = {};
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle, op_, a_, b_, c_layout, d_, pref, kMaxCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found <= s.algo_index || s.algo_index >= kMaxCandidates) {
    // No cuBLASLt algorithm (an e4m3 output with ReLU at some shapes): the CUTLASS kernels that
    // compute the spec, when there are any, are the plan's candidates alone.
    if (s.algo_index == 0) {
      find_cutlass(workspace_bytes);
      if (!cutlass_.empty()) {
        set_choice(candidate(0));
        return;
      }
    }
    // Release what was made: a throwing constructor runs no destructor.
    if (c_) cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatrixLayoutDestroy(d_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatmulDescDestroy(op_);
    std::ostringstream os;
    os << "cuBLASLt has no algorithm" << (s.algo_index > 0 ? " number " + std::to_string(s.algo_index) : std::string())
       << " for a " << dtype_name(s.ab_dtype) << " GEMM of M=" << s.M << " N=" << s.N << " K=" << s.K
       << " batch=" << s.batch << " (" << cublasLtGetStatusString(st) << ").";
    throw Error(os.str());
  }
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) candidates_.push_back(results[i].algo);
  if (candidates_.empty()) candidates_.push_back(results[0].algo);
  algo_ = results[s.algo_index].algo;
  find_cutlass(workspace_bytes);
}

// The CUTLASS kernels that compute this spec exactly as cuBLASLt does (layers/cutlass/cutlass_gemm.h):
// one product, B as NK, bf16 or e4m3 operands (fp8: the kernels whose accumulation is the spec's,
// promoted or fast), a bf16 or e4m3 D, the bias, GELU+bias or ReLU+bias epilogue (or none: a null bias),
// and a workspace that fits.
void Gemm::find_cutlass(std::size_t workspace_bytes) {
  const GemmSpec& s = spec_;
  const bool fp8 = s.ab_dtype == DType::F8E4M3;
  if (s.batch != 1 || s.b_layout != BLayout::NK || s.M == 0 || s.N == 0) return;
  if (s.ab_dtype != DType::BF16 && !fp8) return;
  if (s.d_dtype != DType::BF16 && s.d_dtype != DType::F8E4M3) return;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const CutlassEpilogue epi = s.epilogue == Epilogue::GeluBias   ? CutlassEpilogue::GeluBias
                              : s.epilogue == Epilogue::BiasRelu ? CutlassEpilogue::ReluBias
                                                                 : CutlassEpilogue::Bias;
  CutlassGemmArgs shape;
  shape.M = s.M;
  shape.N = s.N;
  shape.K = s.K;
  shape.ldd = s.ldd;
  for (const CutlassGemmKernel* k : cutlass_gemm_kernels(device)) {
    if (k->ab_dtype() != s.ab_dtype || k->d_dtype() != s.d_dtype || k->epilogue() != epi ||
        (k->has_c() &&
         k->c_dtype() != DType::BF16) ||  // a plan's C is bf16 (the e4m3 residual kernels are ResNet-50's)
        (fp8 && k->fast_accum() != s.fp8_fast_accum) ||
        !k->refusal(shape).empty())
      continue;
    for (const CutlassSchedule& sched : cutlass_schedules())
      if (k->workspace_bytes(shape, sched) <= workspace_bytes) cutlass_.push_back({k, sched});
  }
}

Gemm::Choice Gemm::candidate(int i) const {
  const int n = static_cast<int>(candidates_.size());
  if (i < n) return {candidates_[i], nullptr, {}};
  return {algo_, cutlass_.at(i - n).kernel, cutlass_.at(i - n).schedule};
}

void Gemm::set_choice(const Choice& c) {
  algo_ = c.algo;
  cutlass_kernel_ = c.cutlass;
  cutlass_schedule_ = c.schedule;
}

std::string Gemm::backend() const {
  if (!cutlass_kernel_) return "cuBLASLt";
  return "CUTLASS " + cutlass_kernel_->name() + ", " + schedule_name(cutlass_schedule_);
}

int Gemm::autotune(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float* best_ms,
                   CandidateLaunch launch) {
  if (spec_.M == 0 || spec_.N == 0 || candidate_count() < 2) {
    *best_ms = 0.f;
    return 0;
  }
  const Choice keep = choice();
  int best = -1;
  float best_time = 0.f;
  for (int i = 0; i < candidate_count(); ++i) {
    set_choice(candidate(i));  // what run() enqueues, and so what the timing's graph captures
    // A candidate the library lists but will not run here throws from run(): passed over.
    const float ms = time_candidate(
        ctx.stream(),
        [&] {
          run(ctx, d, a, b, bias, 1.f, 0.f);
          return true;
        },
        nullptr, launch);
    if (ms >= 0.f && (best < 0 || ms < best_time)) {
      best = i;
      best_time = ms;
    }
  }
  set_choice(best >= 0 ? candidate(best) : keep);
  *best_ms = best >= 0 ? best_time : 0.f;
  return best >= 0 ? best : 0;
}

Gemm::Gemm(Gemm&& o) noexcept
    : spec_(o.spec_),
      op_(std::exchange(o.op_, nullptr)),
      a_(std::exchange(o.a_, nullptr)),
      b_(std::exchange(o.b_, nullptr)),
      d_(std::exchange(o.d_, nullptr)),
      c_(std::exchange(o.c_, nullptr)),
      algo_(o.algo_),
      candidates_(std::move(o.candidates_)),
      cutlass_(std::move(o.cutlass_)),
      cutlass_kernel_(o.cutlass_kernel_),
      cutlass_schedule_(o.cutlass_schedule_),
      cutlass_cache_(std::move(o.cutlass_cache_)) {}

Gemm::~Gemm() {
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void Gemm::run(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float alpha, float beta,
               const void* c) const {
  if (spec_.M == 0 || spec_.N == 0) return;
  if (cutlass_kernel_) {
    run_cutlass(ctx, d, a, b, bias, alpha, beta, c);
    return;
  }
  if (spec_.epilogue != Epilogue::None)
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  // An fp8 D has a BF16 C of its own layout (c_), so C can never be D itself: cuBLASLt refuses a
  // C that is D under another descriptor (laptime_fp8_shapes' fp8->fp8 rows failed so on the
  // H200 until only those with a residual C ran). Without a C (beta = 0) it gets none, as
  // TransformerEngine passes its fp8-output GEMMs.
  const void* c_ptr = c ? c : (c_ ? nullptr : d);
  if (!c_ptr && beta != 0.f) throw Error("internal: a GEMM with an fp8 output accumulates only into a given bf16 C.");
  const cublasStatus_t st = cublasLtMatmul(ctx.cublaslt(), op_, &alpha, b, a_, a, b_, &beta, c_ptr, c_ ? c_ : d_, d, d_,
                                           &algo_, ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
  // The spec in the sentence: a refusal here is what a layer's plan line reports (time_candidate).
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::ostringstream os;
    os << "cublasLtMatmul (layers/gemm.cpp:" << __LINE__ << ") refused the " << dtype_name(spec_.ab_dtype)
       << " GEMM M=" << spec_.M << " N=" << spec_.N << " K=" << spec_.K << " (D " << dtype_name(spec_.d_dtype) << ", C "
       << (c       ? "given"
           : c_ptr ? "= D"
                   : "none")
       << ", epilogue " << epilogue_name(spec_.epilogue) << ", beta " << beta << "): " << cublasLtGetStatusString(st)
       << ".";
    throw Error(os.str());
  }
}

// The same product through the chosen CUTLASS kernel: C is `c`, else D itself (the residual added
// in place), as cuBLASLt's run above; an e4m3 D has none.
void Gemm::run_cutlass(const Context& ctx, void* d, const void* a, const void* b, const void* bias, float alpha,
                       float beta, const void* c) const {
  CutlassGemmArgs args;
  args.M = spec_.M;
  args.N = spec_.N;
  args.K = spec_.K;
  args.alpha = alpha;
  args.a = a;
  args.b = b;
  args.d = d;
  args.ldd = spec_.ldd;
  args.c = c ? c : d;
  args.beta = beta;
  args.bias = spec_.epilogue == Epilogue::None ? nullptr : bias;
  if (spec_.ab_dtype == DType::F8E4M3) {
    args.a_scale = spec_.a_scale;
    args.b_scale = spec_.b_scale;
    args.d_scale = spec_.d_dtype == DType::F8E4M3 ? spec_.d_scale : nullptr;
  }
  cutlass_kernel_->run(args, cutlass_schedule_, cutlass_cache_, ctx.workspace(), ctx.workspace_bytes(), ctx.stream());
}

}  // namespace laptime
