// fp8, bias -> bf16 (c_attn, c_proj, the LM head in fp8), two warpgroups on one 128x128 tile: the largest fp8 tile whose promoted accumulators fit in registers (sm90_gemm.cuh).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_bias_128x128_coop() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
