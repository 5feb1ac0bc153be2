#include "layers/pooling.h"

#include "kernels/pooling.cuh"

namespace laptime {

MaxPool::MaxPool(const std::string& name, DType dtype) : name_(name), dtype_(dtype) {}

int MaxPool::out_size(int in) { return pool_out_size(in, 3, 2, 1); }

void MaxPool::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  maxpool3x3s2_forward(dtype_, y, x, N, H, W, C, ctx.stream());
}

LayerCost MaxPool::cost(const std::string& parent, int N, int H, int W, int C) const {
  const double es = static_cast<double>(dtype_size(dtype_));
  return streaming_cost(name_.str(), parent, "pool", double(N) * H * W * C, double(N) * out_size(H) * out_size(W) * C,
                        0, es);
}

GlobalAvgPool::GlobalAvgPool(const std::string& name, DType dtype) : name_(name), dtype_(dtype) {}

void GlobalAvgPool::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  global_avgpool_forward(dtype_, y, x, N, H, W, C, ctx.stream());
}

LayerCost GlobalAvgPool::cost(const std::string& parent, int N, int H, int W, int C) const {
  const double es = static_cast<double>(dtype_size(dtype_));
  return streaming_cost(name_.str(), parent, "pool", double(N) * H * W * C, double(N) * C, 0, es);
}

}  // namespace laptime
