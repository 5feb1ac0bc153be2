// fp8, GELU(tanh) + bias -> e4m3, 64x128 ping-pong (one tile's epilogue under the other's mainloop).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_gelu_e4m3_64x128_pingpong() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 64, 128, 128, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
