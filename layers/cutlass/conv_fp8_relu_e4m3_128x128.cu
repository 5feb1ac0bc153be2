// fp8 implicit-GEMM convolution, ReLU + bias -> e4m3 (ResNet-50's 3x3 on the e4m3 stream), tile 128x128.
#include "layers/cutlass/sm90_conv.cuh"

namespace laptime::sm90 {

const CutlassConvKernel& conv_fp8_relu_e4m3_128x128() {
  static const Sm90ConvE4m3<128, 128, 128> kernel;
  return kernel;
}

}  // namespace laptime::sm90
