// fp8 with fast accumulation, ReLU + bias + the e4m3 residual -> e4m3 (conv3 on the e4m3 stream),
// 256x128 cooperative, no cluster, 128x128 epilogue subtiles: two C stages of 16 KB, half the
// subtiles' barriers and TMA stores of the 128x64 ones.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_relu_res8_e4m3_256x128_coop_e128() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::ReluBias, 256, 128, 128, 1, 1, CooperativeFastAccum, e4m3, 128>
      kernel;
  return kernel;
}

}  // namespace laptime::sm90
