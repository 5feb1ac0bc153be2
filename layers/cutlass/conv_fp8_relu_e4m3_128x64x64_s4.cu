// fp8 implicit-GEMM convolution, ReLU + bias -> e4m3, tile 128x64 with 64-deep k-blocks and a
// four-stage ring (48 KB) under a 128-register cap (cutlass.cmake): two blocks an SM, each one's
// prologue and epilogue under the other's mainloop (layer1's 3x3 ran at 25% of its bound with
// the whole shared memory to one block).
#include "layers/cutlass/sm90_conv.cuh"

namespace laptime::sm90 {

const CutlassConvKernel& conv_fp8_relu_e4m3_128x64x64_s4() {
  static const Sm90ConvE4m3<128, 64, 64, 4> kernel;
  return kernel;
}

}  // namespace laptime::sm90
