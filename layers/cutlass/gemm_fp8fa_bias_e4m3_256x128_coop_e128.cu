// fp8 with fast accumulation, bias -> e4m3 (the downsample on the e4m3 stream), 256x128
// cooperative, no cluster, 128x128 epilogue subtiles (they won conv3 over 128x64; the downsample
// is a store-bound tile at 36-48% of the copy roof).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_bias_e4m3_256x128_coop_e128() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::Bias, 256, 128, 128, 1, 1, CooperativeFastAccum, void, 128> kernel;
  return kernel;
}

}  // namespace laptime::sm90
