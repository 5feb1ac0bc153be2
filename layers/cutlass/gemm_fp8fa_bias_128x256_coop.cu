// fp8 with fast accumulation, bias -> bf16, the large cooperative tile (the LM head's N = 50304).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_bias_128x256_coop() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 128, 256, 128, 2, 1, CooperativeFastAccum> kernel;
  return kernel;
}

}  // namespace laptime::sm90
