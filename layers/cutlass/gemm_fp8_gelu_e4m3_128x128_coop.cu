// fp8, GELU(tanh) + bias, · the next layer's 1/s -> e4m3 (c_fc writing mlp.c_proj's input: the pair of layers/mlp.h), 128x128 cooperative.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_gelu_e4m3_128x128_coop() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 128, 128, 2, 1, Cooperative> kernel;
  return kernel;
}

}  // namespace laptime::sm90
