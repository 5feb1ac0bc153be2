#include "layers/resnet50/pooling.h"

#include "kernels/pooling.cuh"

namespace laptime {

MaxPool::MaxPool(const std::string& name, DType dtype, const lab::KernelChoice& kernels)
    : name_(name), dtype_(dtype), launch_(lab::maxpool_version(lab::chosen_version(kernels, "maxpool", dtype))) {}

int MaxPool::out_size(int in) { return pool_out_size(in, 3, 2, 1); }

void MaxPool::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  launch_({y, x, N, H, W, C, dtype_}, ctx.stream());
}

LayerCost MaxPool::cost(const std::string& parent, int N, int H, int W, int C) const {
  const double es = static_cast<double>(dtype_size(dtype_));
  return streaming_cost(name_.str(), parent, "pool", double(N) * H * W * C, double(N) * out_size(H) * out_size(W) * C,
                        0, es);
}

GlobalAvgPool::GlobalAvgPool(const std::string& name, DType dtype, const lab::KernelChoice& kernels)
    : name_(name), dtype_(dtype), launch_(lab::avgpool_version(lab::chosen_version(kernels, "avgpool", dtype))) {}

void GlobalAvgPool::forward(const Context& ctx, void* y, const void* x, int N, int H, int W, int C,
                            const float* x_scale) const {
  NvtxRange range(ctx, NvtxLevel::Layer, name_);
  if (x_scale)
    global_avgpool_e4m3_forward(y, x, x_scale, N, H, W, C, ctx.stream());
  else
    launch_({y, x, N, H, W, C, dtype_}, ctx.stream());
}

LayerCost GlobalAvgPool::cost(const std::string& parent, int N, int H, int W, int C, bool e4m3_input) const {
  const double es = static_cast<double>(dtype_size(dtype_));
  LayerCost c = streaming_cost(name_.str(), parent, "pool", double(N) * H * W * C, double(N) * C, 0, es);
  if (e4m3_input) c.input_bytes /= es;
  return c;
}

}  // namespace laptime
