// fp8 implicit-GEMM convolution, ReLU + bias -> e4m3, tile 128x64 with 64-deep k-blocks: layer1's
// 3x3 (64 channels, one filter tap a k-block), where the 128-deep tile ran at 16% of its bound.
#include "layers/cutlass/sm90_conv.cuh"

namespace laptime::sm90 {

const CutlassConvKernel& conv_fp8_relu_e4m3_128x64x64() {
  static const Sm90ConvE4m3<128, 64, 64> kernel;
  return kernel;
}

}  // namespace laptime::sm90
