// bf16, GELU(tanh) + bias -> bf16 (c_fc), the large tile.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_gelu_128x256_coop() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::GeluBias, 128, 256, 64, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
