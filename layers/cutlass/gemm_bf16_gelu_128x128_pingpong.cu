// bf16, GELU(tanh) + bias -> bf16 (c_fc), the smaller ping-pong tile (batch 1).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_gelu_128x128_pingpong() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::GeluBias, 128, 128, 64, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
