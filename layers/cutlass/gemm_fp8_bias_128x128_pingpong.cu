// fp8, bias [+ beta·C] -> bf16, the smaller ping-pong tile (N = 768, batch 1).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_bias_128x128_pingpong() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
