// fp8, bias -> bf16, one warpgroup per 64x128 tile, two tiles in flight: the smaller tile for shapes whose 128x128 tiles fill the SMs unevenly.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8_bias_64x128_pingpong() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 64, 128, 128, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
