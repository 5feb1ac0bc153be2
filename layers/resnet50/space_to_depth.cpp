#include "layers/resnet50/space_to_depth.h"

#include "core/check.h"

namespace laptime {

SpaceToDepthStem space_to_depth_stem(const ConvShape& stem, DType dtype) {
  require(stem.stride == 2, "internal: the space-to-depth stem needs a stride-2 convolution.");
  SpaceToDepthStem s;
  s.in_channels = stem.in_channels;
  s.kernel = stem.kernel;
  s.pad = stem.pad;
  const int per16 = 16 / static_cast<int>(dtype_size(dtype));  // elements in 16 bytes
  s.stored_channels = (4 * stem.in_channels + per16 - 1) / per16 * per16;
  return s;
}

std::vector<float> space_to_depth_weight(const SpaceToDepthStem& s, const std::vector<float>& w, int K) {
  const int k = s.kernel, C = s.in_channels, k2 = s.s2d_kernel(), Cs = s.stored_channels;
  require(w.size() == static_cast<std::size_t>(K) * k * k * C,
          "internal: the stem's weight does not have " + std::to_string(K) + "x" + std::to_string(k) + "x" +
              std::to_string(k) + "x" + std::to_string(C) + " values.");
  std::vector<float> out(static_cast<std::size_t>(K) * k2 * k2 * Cs, 0.f);
  for (int o = 0; o < K; ++o)
    for (int a = 0; a < k2; ++a)
      for (int b = 0; b < k2; ++b)
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            const int r = 2 * a + dy, q = 2 * b + dx;
            if (r >= k || q >= k) continue;  // the zero row and column of the 8×8 padding
            for (int c = 0; c < C; ++c)
              out[((static_cast<std::size_t>(o) * k2 + a) * k2 + b) * Cs + (2 * dy + dx) * C + c] =
                  w[((static_cast<std::size_t>(o) * k + r) * k + q) * C + c];
          }
  return out;
}

}  // namespace laptime
