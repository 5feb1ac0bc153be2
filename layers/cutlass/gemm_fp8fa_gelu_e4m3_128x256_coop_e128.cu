// fp8 with fast accumulation, GELU(tanh) + bias -> e4m3, the large cooperative tile with 128x128
// epilogue subtiles: two a tile where CUTLASS's 128x32 makes eight.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_gelu_e4m3_128x256_coop_e128() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 256, 128, 2, 1, CooperativeFastAccum, void, 128> kernel;
  return kernel;
}

}  // namespace laptime::sm90
