// bf16, ReLU + bias + the e4m3 residual -> e4m3 (ResNet-50's conv3 on the e4m3 residual stream), 128x256 cooperative.
#include "layers/cutlass/sm90_gemm.cuh"

namespace laptime::sm90 {

const CutlassGemmKernel& gemm_bf16_relu_res8_e4m3_128x256_coop() {
  static const Sm90Gemm<bf16, e4m3, CutlassEpilogue::ReluBias, 128, 256, 64, 2, 1, Cooperative, e4m3> kernel;
  return kernel;
}

}  // namespace laptime::sm90
