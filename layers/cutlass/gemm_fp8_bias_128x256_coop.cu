// fp8 (e4m3 x, e4m3 W, s_x·s_w), bias [+ beta·C] -> bf16 (c_attn, both projections with their residual, the LM head), the large tile.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_bias_128x256_coop() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 128, 256, 128, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
