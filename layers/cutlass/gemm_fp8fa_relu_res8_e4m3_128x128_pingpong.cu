// fp8 with fast accumulation, ReLU + bias + the e4m3 residual -> e4m3 (ResNet-50's conv3 on the e4m3 stream), 128x128 ping-pong.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_relu_res8_e4m3_128x128_pingpong() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::ReluBias, 128, 128, 128, 2, 1, PingpongFastAccum, e4m3> kernel;
  return kernel;
}

}  // namespace laptime::sm90
