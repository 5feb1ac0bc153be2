// bf16, ReLU + bias + the bf16 residual (beta · C) -> bf16 (ResNet-50's 1x1 convolutions in
// bf16: conv1 and conv2's GEMM route, conv3 with its residual), 128x128 ping-pong, cluster 2x1:
// at K = 64-512 a tile is 1-8 k-blocks, and one warpgroup's epilogue (C read, D written) runs
// under the other's mainloop.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_relu_128x128_pingpong() {
  static const Sm90Gemm<bf16, bf16, CutlassEpilogue::ReluBias, 128, 128, 64, 2, 1, Pingpong> kernel;
  return kernel;
}

}  // namespace laptime::sm90
