// fp8 with fast accumulation (LAPTIME_FP8_FAST_ACCUM, on by default), bias -> bf16, 128x128 ping-pong: one tile's epilogue under the other's mainloop, for K = 768's short mainloops.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_bias_128x128_pingpong() {
  static const Sm90Gemm<e4m3, bf16, CutlassEpilogue::Bias, 128, 128, 128, 2, 1, PingpongFastAccum> kernel;
  return kernel;
}

}  // namespace laptime::sm90
