// cuDNN fused attention through cudnn-frontend (see layers/sdpa_cudnn.h).
//
// The graph: q, k, v [B, H, T, hd] as views of qkv [B, T, 3, H, hd] (strides {T·3C, hd, 3C, 1},
// k and v at element offsets C and 2C), one SDPA node (causal, top-left aligned, scale
// 1/sqrt(hd), inference: no softmax statistics written), output [B, H, T, hd] with strides
// {T·C, hd, C, 1}, which is the merged-heads [B, T, C] layout. fp32 for everything between.
#include "layers/sdpa_cudnn.h"

#include <cmath>
#include <exception>
#include <vector>

#include <cudnn_frontend.h>

#include "core/buffer.h"
#include "core/check.h"

namespace laptime {
namespace fe = cudnn_frontend;

namespace {
// The frontend's raw-pointer execute takes the user tensors' pointers sorted by uid.
enum Uid : int64_t { kUidQ = 1, kUidK, kUidV, kUidO };
}  // namespace

struct CudnnSdpa::Impl {
  cudnnHandle_t handle = nullptr;  // the building context's, bound to its stream
  cudaStream_t stream = nullptr;
  fe::graph::Graph graph;
  int64_t C = 0;          // H·hd, the element offset of k (and half that of v) inside a qkv row
  std::size_t es = 0;     // bytes per element
  std::string engine;

  fe::error_t enqueue(void* workspace, void* out, const void* qkv) const {
    const char* base = static_cast<const char*>(qkv);
    void* ptrs[4] = {const_cast<char*>(base), const_cast<char*>(base + C * es), const_cast<char*>(base + 2 * C * es),
                     out};
    return graph.execute(handle, ptrs, 4, workspace);
  }
};

CudnnSdpa::CudnnSdpa() = default;
CudnnSdpa::~CudnnSdpa() = default;
CudnnSdpa::CudnnSdpa(CudnnSdpa&&) noexcept = default;
CudnnSdpa& CudnnSdpa::operator=(CudnnSdpa&&) noexcept = default;

const std::string& CudnnSdpa::engine() const {
  static const std::string none;
  return impl_ ? impl_->engine : none;
}

bool CudnnSdpa::build(Context& ctx, int B, int T, int H, int hd, DType dtype, std::string* why) {
  if (dtype != DType::BF16 && dtype != DType::F16) {
    *why = std::string("cuDNN's fused attention takes BF16 or F16 data, not ") + dtype_name(dtype) + ".";
    return false;
  }
  auto p = std::make_unique<Impl>();
  p->handle = ctx.cudnn();
  p->stream = ctx.stream();
  p->C = int64_t{H} * hd;
  p->es = dtype_size(dtype);
  const int64_t b = B, h = H, t = T, d = hd, C = p->C;
  try {
    fe::graph::Graph& g = p->graph;
    const fe::DataType_t io = dtype == DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
    g.set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
    using Tensor = fe::graph::Tensor_attributes;
    const std::vector<int64_t> dims{b, h, t, d}, in_strides{t * 3 * C, d, 3 * C, 1};
    auto q = g.tensor(Tensor().set_name("q").set_uid(kUidQ).set_dim(dims).set_stride(in_strides));
    auto k = g.tensor(Tensor().set_name("k").set_uid(kUidK).set_dim(dims).set_stride(in_strides));
    auto v = g.tensor(Tensor().set_name("v").set_uid(kUidV).set_dim(dims).set_stride(in_strides));
    auto attrs = fe::graph::SDPA_attributes()
                     .set_name("sdpa")
                     .set_generate_stats(false)
                     .set_causal_mask(true)
                     .set_attn_scale(1.f / std::sqrt(static_cast<float>(hd)));
    auto [o, stats] = g.sdpa(q, k, v, attrs);
    (void)stats;  // inference: none
    o->set_output(true).set_name("o").set_uid(kUidO).set_data_type(io).set_dim(dims).set_stride({t * C, d, C, 1});

    fe::error_t e = g.validate();
    if (e.is_good()) e = g.build_operation_graph(p->handle);
    if (e.is_good()) e = g.create_execution_plans({fe::HeurMode_t::A});
    if (e.is_good()) e = g.check_support();
    if (e.is_good()) e = g.build_plans();
    if (e.is_bad()) {
      *why = e.get_message();
      return false;
    }
    if (g.get_variant_pack_uids_sorted() != std::vector<int64_t>{kUidQ, kUidK, kUidV, kUidO}) {
      *why = "cudnn-frontend lists the attention graph's tensors in an unexpected order.";
      return false;
    }
    (void)g.get_plan_name(p->engine);
    int64_t workspace = 0;
    e = g.get_workspace_size(workspace);
    if (e.is_bad()) {
      *why = e.get_message();
      return false;
    }
    ctx.reserve_workspace(static_cast<std::size_t>(workspace));
    // The trial run, on zeroed scratch of the real shape: execution-time refusals and the first
    // launch's module loading happen here, at build, not in the timed loop.
    DeviceBuffer qkv(static_cast<std::size_t>(b * t * 3 * C) * p->es), out(static_cast<std::size_t>(b * t * C) * p->es);
    CUDA_CHECK(cudaMemsetAsync(qkv.data(), 0, qkv.bytes(), p->stream));
    e = p->enqueue(ctx.workspace(), out.data(), qkv.data());
    CUDA_CHECK(cudaStreamSynchronize(p->stream));  // before the scratch is freed
    if (e.is_bad()) {
      *why = e.get_message();
      return false;
    }
  } catch (const std::exception& ex) {  // the frontend's lower layers may throw instead
    *why = ex.what();
    return false;
  }
  impl_ = std::move(p);
  return true;
}

void CudnnSdpa::run(const Context& ctx, void* out, const void* qkv) const {
  if (!impl_) throw Error("internal: cuDNN attention run before it was built.");
  if (impl_->stream != ctx.stream()) throw Error("internal: cuDNN attention runs on a stream it was not built for.");
  fe::error_t e = impl_->enqueue(ctx.workspace(), out, qkv);
  if (e.is_bad())
    fail_library_call("cuDNN", "cudnn_frontend::graph::Graph::execute (attention)", e.get_message().c_str(), __func__,
                      __FILE__, __LINE__);
}

}  // namespace laptime
