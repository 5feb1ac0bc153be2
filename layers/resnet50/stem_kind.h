// Which implementation runs ResNet's stem (conv1 + ReLU + the 3×3/2 max pool). Kept apart from
// the layers so that the CLI can name the choice without them.
#pragma once

namespace laptime {

//   Auto:  the default: Fused wherever it runs (measured faster on the H200 at B1, B32 and
//          B256, models/resnet50.cpp), else Cudnn without a word.
//   Cudnn: the 4×4 space-to-depth convolution through cuDNN (bias and ReLU fused), then our
//          max-pool kernel: NVTX ranges `conv1` and `maxpool`. Every precision.
//   Fused: one kernel for all of it (kernels/stem.cu), bf16 only, 8 to 64 output channels in
//          steps of 8: one NVTX range `conv1` and no `maxpool` range. Where it cannot run,
//          the model falls back to Cudnn and says why (ResNet50::stem_variant()).
enum class StemKind { Auto, Cudnn, Fused };

inline const char* stem_kind_name(StemKind k) {
  switch (k) {
    case StemKind::Auto:
      return "auto";
    case StemKind::Cudnn:
      return "cudnn";
    case StemKind::Fused:
      return "fused";
  }
  return "?";
}

}  // namespace laptime
