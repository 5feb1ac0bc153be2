// fp8 implicit-GEMM convolution, ReLU + bias -> e4m3, tile 128x64 with 64-deep k-blocks, a
// four-stage ring (48 KB) and a launch bound of two blocks an SM (128 registers a thread): each
// block's prologue and epilogue under the other's mainloop. Layer1's 3x3 ran at 25% of its bound
// with the whole shared memory to one block (164 us at B256), 33% with two (123 us).
#include "layers/cutlass/sm90_conv.cuh"

namespace laptime::sm90 {

const CutlassConvKernel& conv_fp8_relu_e4m3_128x64x64_s4() {
  static const Sm90ConvE4m3<128, 64, 64, 4, 2> kernel;
  return kernel;
}

}  // namespace laptime::sm90
