// fp8, GELU(tanh) + bias, · the next layer's 1/s -> e4m3 (c_fc for mlp.c_proj), the smaller ping-pong tile.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_gelu_e4m3_128x128_pingpong() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 128, 128, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
