// bf16, ReLU + bias + the e4m3 residual -> e4m3 (ResNet-50's conv3 on the e4m3 stream), 128x128 cooperative, no cluster.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_relu_res8_e4m3_128x128_coop() {
  static const Sm90Gemm<bf16, e4m3, CutlassEpilogue::ReluBias, 128, 128, 64, 1, 1, Cooperative, e4m3> kernel;
  return kernel;
}

}  // namespace laptime::sm90
