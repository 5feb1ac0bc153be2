// fp8 with fast accumulation, bias -> e4m3 (the downsample on the e4m3 stream), 256x128
// cooperative, no cluster, 128x64 epilogue subtiles (the ping-pong's 64x64 ran it at 36-48% of
// the copy roof: a store-bound tile).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_bias_e4m3_256x128_coop_e64() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::Bias, 256, 128, 128, 1, 1, CooperativeFastAccum, void, 64> kernel;
  return kernel;
}

}  // namespace laptime::sm90
