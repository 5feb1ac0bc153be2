// fp8 with fast accumulation, ReLU + bias + the e4m3 residual -> e4m3 (conv3 on the e4m3 stream),
// 256x128 cooperative, no cluster, 128x64 epilogue subtiles: four C stages of 8 KB in flight where
// CUTLASS's own 128x32 choice keeps 4 KB each (conv3 is the epilogue's time: K is 1-4 k-blocks).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_relu_res8_e4m3_256x128_coop_e64() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::ReluBias, 256, 128, 128, 1, 1, CooperativeFastAccum, e4m3, 64> kernel;
  return kernel;
}

}  // namespace laptime::sm90
