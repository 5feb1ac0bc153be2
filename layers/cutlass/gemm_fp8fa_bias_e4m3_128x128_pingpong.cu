// fp8 with fast accumulation, bias -> e4m3 (ResNet-50's downsample on the e4m3 stream), 128x128 ping-pong.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_bias_e4m3_128x128_pingpong() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, PingpongFastAccum> kernel;
  return kernel;
}

}  // namespace laptime::sm90
