// fp8 with fast accumulation, GELU(tanh) + bias -> e4m3 (c_fc writing mlp.c_proj's input),
// 128x128 ping-pong with 64x128 epilogue subtiles: two a tile where CUTLASS's 64x64 makes four,
// so half the barriers and TMA stores beside the tanh (the 128x128 subtiles won ResNet-50's conv3).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_gelu_e4m3_128x128_pingpong_e128() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 128, 128, 2, 1, PingpongFastAccum, void, 128> kernel;
  return kernel;
}

}  // namespace laptime::sm90
