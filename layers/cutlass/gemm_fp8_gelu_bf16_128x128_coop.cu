// fp8, GELU(tanh) + bias -> bf16 (c_fc when mlp.c_proj runs in bf16), 128x128 cooperative.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_gelu_bf16_128x128_coop() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::GeluBias, 128, 128, 128, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
