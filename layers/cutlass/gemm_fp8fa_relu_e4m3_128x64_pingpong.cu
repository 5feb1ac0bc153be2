// fp8 with fast accumulation, ReLU + bias -> e4m3 (conv1 at 64 output channels: layer1), 128x64 ping-pong.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_relu_e4m3_128x64_pingpong() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::ReluBias, 128, 64, 128, 1, 1, PingpongFastAccum> kernel;
  return kernel;
}

}  // namespace laptime::sm90
