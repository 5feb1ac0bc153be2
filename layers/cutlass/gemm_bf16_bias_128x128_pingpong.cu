// bf16, bias [+ beta·C] -> bf16, the smaller tile for N = 768 and batch 1 (more tiles than SMs), ping-pong: one tile's epilogue under the other's mainloop.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_bias_128x128_pingpong() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::Bias, 128, 128, 64, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
