// bf16, bias [+ beta·C] -> bf16 (c_attn, both projections with their residual, the LM head), the large tile.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_bias_128x256_coop() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::Bias, 128, 256, 64, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
