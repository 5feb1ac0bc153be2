// bf16, ReLU + bias + the bf16 residual -> bf16, 256x128 cooperative, no cluster, 128x128
// epilogue subtiles: the tile the e4m3 stream's conv3 kept (two C stages of 32 KB, half the
// subtiles' barriers and TMA stores of CUTLASS's automatic 128x32).
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_relu_256x128_coop_e128() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::ReluBias, 256, 128, 64, 1, 1, Cooperative, bf16, 128> kernel;
  return kernel;
}

}  // namespace laptime::sm90
