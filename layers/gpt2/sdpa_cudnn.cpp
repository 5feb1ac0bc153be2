// cuDNN fused attention through cudnn-frontend (see layers/gpt2/sdpa_cudnn.h).
//
// The graph: q, k, v [B, H, T, hd] as views of qkv [B, T, 3, H, hd] (strides {T·3C, hd, 3C, 1},
// k and v at element offsets C and 2C), one SDPA node (causal, top-left aligned, scale
// 1/sqrt(hd), inference: no softmax statistics written), output [B, H, T, hd] with strides
// {T·C, hd, C, 1}, which is the merged-heads [B, T, C] layout. fp32 for everything between.
// The fp8 graph (CudnnSdpaFp8) is the same with e4m3 views and the fp8 node's six scale inputs
// and two amax outputs, device scalars all.
#include "layers/gpt2/sdpa_cudnn.h"

#include <cmath>
#include <exception>
#include <utility>
#include <vector>

#include <cudnn_frontend.h>

#include "core/buffer.h"
#include "core/check.h"

namespace laptime {
namespace fe = cudnn_frontend;

namespace {
// The frontend's raw-pointer execute takes the user tensors' pointers sorted by uid.
enum Uid : int64_t { kUidQ = 1, kUidK, kUidV, kUidO };

// Checks a described graph, builds its plan (heuristic A, the first that cuDNN supports) and
// reserves its workspace on ctx. `uids`: the user tensors in the order execute()'s pointers
// come. False with cuDNN's words in *why.
bool make_plan(Context& ctx, fe::graph::Graph& g, cudnnHandle_t handle, const std::vector<int64_t>& uids,
               std::string* engine, std::string* why) {
  fe::error_t e = g.validate();
  if (e.is_good()) e = g.build_operation_graph(handle);
  if (e.is_good()) e = g.create_execution_plans({fe::HeurMode_t::A});
  if (e.is_good()) e = g.check_support();
  if (e.is_good()) e = g.build_plans();
  int64_t workspace = 0;
  if (e.is_good()) e = g.get_workspace_size(workspace);
  if (e.is_bad()) {
    *why = e.get_message();
    return false;
  }
  if (g.get_variant_pack_uids_sorted() != uids) {
    *why = "cudnn-frontend lists the attention graph's tensors in an unexpected order.";
    return false;
  }
  (void)g.get_plan_name(*engine);
  ctx.reserve_workspace(static_cast<std::size_t>(workspace));
  return true;
}
}  // namespace

struct CudnnSdpa::Impl {
  cudnnHandle_t handle = nullptr;  // the building context's, bound to its stream
  cudaStream_t stream = nullptr;
  fe::graph::Graph graph;
  int64_t C = 0;       // H·hd, the element offset of k (and half that of v) inside a qkv row
  std::size_t es = 0;  // bytes per element
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
    g.set_io_data_type(io)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    using Tensor = fe::graph::Tensor_attributes;
    const std::vector<int64_t> dims{b, h, t, d}, in_strides{t * 3 * C, d, 3 * C, 1};
    auto q = g.tensor(Tensor().set_name("q").set_uid(kUidQ).set_dim(dims).set_stride(in_strides));
    auto k = g.tensor(Tensor().set_name("k").set_uid(kUidK).set_dim(dims).set_stride(in_strides));
    auto v = g.tensor(Tensor().set_name("v").set_uid(kUidV).set_dim(dims).set_stride(in_strides));
    auto attrs =
        fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(false).set_causal_mask(true).set_attn_scale(
            1.f / std::sqrt(static_cast<float>(hd)));
    auto [o, stats] = g.sdpa(q, k, v, attrs);
    (void)stats;  // inference: none
    o->set_output(true).set_name("o").set_uid(kUidO).set_data_type(io).set_dim(dims).set_stride({t * C, d, C, 1});

    if (!make_plan(ctx, g, p->handle, {kUidQ, kUidK, kUidV, kUidO}, &p->engine, why)) return false;
    // The trial run, on zeroed scratch of the real shape: execution-time refusals and the first
    // launch's module loading happen here, at build, not in the timed loop.
    DeviceBuffer qkv(static_cast<std::size_t>(b * t * 3 * C) * p->es), out(static_cast<std::size_t>(b * t * C) * p->es);
    CUDA_CHECK(cudaMemsetAsync(qkv.data(), 0, qkv.bytes(), p->stream));
    fe::error_t e = p->enqueue(ctx.workspace(), out.data(), qkv.data());
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

namespace {
// The fp8 graph's tensors by uid (the raw-pointer execute sorts by uid).
enum Uid8 : int64_t {
  k8Q = 1,
  k8K,
  k8V,
  k8O,
  k8DescaleQ,
  k8DescaleK,
  k8DescaleV,
  k8DescaleS,
  k8ScaleS,
  k8ScaleO,
  k8AmaxS,
  k8AmaxO
};
// P ≤ 1 is stored as e4m3(P · 448): the largest probability at e4m3's largest finite value.
constexpr float kProbabilityScale = 448.f;
}  // namespace

struct CudnnSdpaFp8::Impl {
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  fe::graph::Graph graph;
  int64_t C = 0;
  std::string engine;
  DeviceBuffer scalars;  // floats: descale_s, scale_s (constants), amax_s, amax_o (written, unread)

  fe::error_t enqueue(void* workspace, void* out8, const void* qkv8, const float* qkv_scale,
                      const float* out_inv_scale) const {
    const char* base = static_cast<const char*>(qkv8);
    float* f = static_cast<float*>(scalars.data());
    auto* s = const_cast<float*>(qkv_scale);
    void* ptrs[12] = {const_cast<char*>(base),
                      const_cast<char*>(base + C),
                      const_cast<char*>(base + 2 * C),
                      out8,
                      s,
                      s,
                      s,
                      f,
                      f + 1,
                      const_cast<float*>(out_inv_scale),
                      f + 2,
                      f + 3};
    return graph.execute(handle, ptrs, 12, workspace);
  }
};

CudnnSdpaFp8::CudnnSdpaFp8() = default;
CudnnSdpaFp8::~CudnnSdpaFp8() = default;
CudnnSdpaFp8::CudnnSdpaFp8(CudnnSdpaFp8&&) noexcept = default;
CudnnSdpaFp8& CudnnSdpaFp8::operator=(CudnnSdpaFp8&&) noexcept = default;

const std::string& CudnnSdpaFp8::engine() const {
  static const std::string none;
  return impl_ ? impl_->engine : none;
}

bool CudnnSdpaFp8::build(Context& ctx, int B, int T, int H, int hd, std::string* why) {
  auto p = std::make_unique<Impl>();
  p->handle = ctx.cudnn();
  p->stream = ctx.stream();
  p->C = int64_t{H} * hd;
  const int64_t b = B, h = H, t = T, d = hd, C = p->C;
  try {
    fe::graph::Graph& g = p->graph;
    g.set_io_data_type(fe::DataType_t::FP8_E4M3)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    using Tensor = fe::graph::Tensor_attributes;
    const std::vector<int64_t> dims{b, h, t, d}, in_strides{t * 3 * C, d, 3 * C, 1}, one{1, 1, 1, 1};
    auto view = [&](const char* name, int64_t uid) {
      return g.tensor(Tensor()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim(dims)
                          .set_stride(in_strides)
                          .set_data_type(fe::DataType_t::FP8_E4M3));
    };
    auto scalar = [&](const char* name, int64_t uid) {
      return g.tensor(
          Tensor().set_name(name).set_uid(uid).set_dim(one).set_stride(one).set_data_type(fe::DataType_t::FLOAT));
    };
    auto q = view("q", k8Q), k = view("k", k8K), v = view("v", k8V);
    auto attrs = fe::graph::SDPA_fp8_attributes()
                     .set_name("sdpa_fp8")
                     .set_generate_stats(false)
                     .set_causal_mask(true)
                     .set_attn_scale(1.f / std::sqrt(static_cast<float>(hd)));
    auto [o, stats, amax_s, amax_o] = g.sdpa_fp8(
        q, k, v, scalar("descale_q", k8DescaleQ), scalar("descale_k", k8DescaleK), scalar("descale_v", k8DescaleV),
        scalar("descale_s", k8DescaleS), scalar("scale_s", k8ScaleS), scalar("scale_o", k8ScaleO), attrs);
    (void)stats;
    o->set_output(true)
        .set_name("o")
        .set_uid(k8O)
        .set_data_type(fe::DataType_t::FP8_E4M3)
        .set_dim(dims)
        .set_stride({t * C, d, C, 1});
    for (auto [a, uid] : {std::pair{amax_s, k8AmaxS}, std::pair{amax_o, k8AmaxO}})
      a->set_output(true).set_uid(uid).set_data_type(fe::DataType_t::FLOAT).set_dim(one).set_stride(one);

    std::vector<int64_t> uids;
    for (int64_t u = k8Q; u <= k8AmaxO; ++u) uids.push_back(u);
    if (!make_plan(ctx, g, p->handle, uids, &p->engine, why)) return false;
    p->scalars = DeviceBuffer(4 * sizeof(float));
    const float host[4] = {1.f / kProbabilityScale, kProbabilityScale, 0.f, 0.f};
    CUDA_CHECK(cudaMemcpyAsync(p->scalars.data(), host, sizeof(host), cudaMemcpyHostToDevice, p->stream));
    // The trial run on zeroed scratch, unit scales: refusals at execution and module loading here.
    DeviceBuffer qkv(static_cast<std::size_t>(b * t * 3 * C)), out(static_cast<std::size_t>(b * t * C)),
        ones(2 * sizeof(float));
    const float unit[2] = {1.f, 1.f};
    CUDA_CHECK(cudaMemcpyAsync(ones.data(), unit, sizeof(unit), cudaMemcpyHostToDevice, p->stream));
    CUDA_CHECK(cudaMemsetAsync(qkv.data(), 0, qkv.bytes(), p->stream));
    const float* u = static_cast<const float*>(ones.data());
    fe::error_t e = p->enqueue(ctx.workspace(), out.data(), qkv.data(), u, u + 1);
    CUDA_CHECK(cudaStreamSynchronize(p->stream));  // before the scratch is freed (and the host arrays' copies done)
    if (e.is_bad()) {
      *why = e.get_message();
      return false;
    }
  } catch (const std::exception& ex) {
    *why = ex.what();
    return false;
  }
  impl_ = std::move(p);
  return true;
}

void CudnnSdpaFp8::run(const Context& ctx, void* out8, const void* qkv8, const float* qkv_scale,
                       const float* out_inv_scale) const {
  if (!impl_) throw Error("internal: cuDNN fp8 attention run before it was built.");
  if (impl_->stream != ctx.stream())
    throw Error("internal: cuDNN fp8 attention runs on a stream it was not built for.");
  fe::error_t e = impl_->enqueue(ctx.workspace(), out8, qkv8, qkv_scale, out_inv_scale);
  if (e.is_bad())
    fail_library_call("cuDNN", "cudnn_frontend::graph::Graph::execute (fp8 attention)", e.get_message().c_str(),
                      __func__, __FILE__, __LINE__);
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
