// fp8 with fast accumulation, GELU(tanh) + bias -> e4m3, the large cooperative tile.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_fp8fa_gelu_e4m3_128x256_coop() {
  static const Sm90Gemm<e4m3, e4m3, CutlassEpilogue::GeluBias, 128, 256, 128, 2, 1, CooperativeFastAccum> kernel;
  return kernel;
}

}  // namespace laptime::sm90
