#include "bench/lab/case.h"

#include <algorithm>
#include <cstring>

#include "bench/lab/cases.h"
#include "core/check.h"
#include "kernels/fp8.cuh"
#include "kernels/lab/gpu_wait.h"
#include "kernels/lab/reference.h"

namespace laptime::lab {

const char* input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::Random:
      return "random";
    case InputKind::Zeros:
      return "zeros";
    case InputKind::Huge:
      return "huge";
  }
  return "?";
}

DType lab_dtype(const std::string& precision) { return precision == "fp32" ? DType::F32 : DType::BF16; }

namespace {
constexpr unsigned char kGuardByte = 0xa5;
}

LabTensor::LabTensor(DType dtype, int64_t n)
    : dtype_(dtype),
      n_(n),
      buf_(static_cast<std::size_t>(std::max<int64_t>(n, 1)) * dtype_size(dtype) + 2 * kGuardBytes) {
  write_guards();
  CUDA_CHECK(cudaDeviceSynchronize());  // the legacy stream's memsets, before any other stream's work
}

void LabTensor::write_guards() const {
  const std::size_t bytes = static_cast<std::size_t>(n_) * dtype_size(dtype_);
  char* base = static_cast<char*>(buf_.data());
  CUDA_CHECK(cudaMemset(base, kGuardByte, kGuardBytes));
  CUDA_CHECK(cudaMemset(base + kGuardBytes + bytes, kGuardByte, kGuardBytes));
}

std::string LabTensor::guard_breach() const {
  const std::size_t bytes = static_cast<std::size_t>(n_) * dtype_size(dtype_), es = dtype_size(dtype_);
  const char* base = static_cast<const char*>(buf_.data());
  std::vector<unsigned char> before(kGuardBytes), after(kGuardBytes);
  CUDA_CHECK(cudaMemcpy(before.data(), base, kGuardBytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(after.data(), base + kGuardBytes + bytes, kGuardBytes, cudaMemcpyDeviceToHost));
  const std::string size = " (it has " + std::to_string(n_) + (n_ == 1 ? " element)" : " elements)");
  for (std::size_t i = 0; i < kGuardBytes; ++i)  // the nearest changed byte first
    if (after[i] != kGuardByte)
      return "wrote past the end of an output: element " + std::to_string(n_ + static_cast<int64_t>(i / es)) + size;
  for (std::size_t i = kGuardBytes; i-- > 0;)
    if (before[i] != kGuardByte)
      return "wrote before the start of an output: element -" + std::to_string((kGuardBytes - i + es - 1) / es) + size;
  return "";
}

void LabTensor::fill(uint32_t seed, float offset, float scale, cudaStream_t stream) {
  fill_uniform(dtype_, data(), n_, seed, offset, scale, stream);
}

void LabTensor::zero(cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(data(), 0, static_cast<std::size_t>(n_) * dtype_size(dtype_), stream));
}

void LabTensor::poison(cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(data(), 0xff, static_cast<std::size_t>(n_) * dtype_size(dtype_), stream));
}

void LabTensor::copy_from(const LabTensor& src, cudaStream_t stream) {
  require(src.n_ == n_ && src.dtype_ == dtype_, "internal: a lab tensor copied from one of another shape.");
  CUDA_CHECK(cudaMemcpyAsync(data(), src.data(), static_cast<std::size_t>(n_) * dtype_size(dtype_),
                             cudaMemcpyDeviceToDevice, stream));
}

void LabTensor::upload(const std::vector<int32_t>& values) {
  require(dtype_ == DType::I32 && static_cast<int64_t>(values.size()) == n_,
          "internal: a lab upload of another shape.");
  CUDA_CHECK(cudaMemcpy(data(), values.data(), values.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
}

void LabTensor::upload(const std::vector<float>& values) {
  require(dtype_ == DType::F32 && static_cast<int64_t>(values.size()) == n_,
          "internal: a lab upload of another shape.");
  CUDA_CHECK(cudaMemcpy(data(), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
}

std::vector<float> LabTensor::download(cudaStream_t stream) const {
  CUDA_CHECK(wait_stream(stream));
  if (const std::string breach = guard_breach(); !breach.empty()) {
    write_guards();
    CUDA_CHECK(cudaDeviceSynchronize());
    throw Error(breach + ".");
  }
  const std::size_t n = static_cast<std::size_t>(n_), es = dtype_size(dtype_);
  std::vector<float> out(n);
  if (dtype_ == DType::F32) {
    CUDA_CHECK(cudaMemcpy(out.data(), data(), n * es, cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<unsigned char> raw(n * es);
  CUDA_CHECK(cudaMemcpy(raw.data(), data(), raw.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype_ == DType::BF16) {  // bf16 is fp32's upper half
      uint16_t h;
      std::memcpy(&h, &raw[2 * i], 2);
      const uint32_t bits = uint32_t{h} << 16;
      std::memcpy(&out[i], &bits, 4);
    } else if (dtype_ == DType::F8E4M3) {
      out[i] = ref::e4m3_value(raw[i]);
    } else if (dtype_ == DType::I32) {
      int32_t v;
      std::memcpy(&v, &raw[4 * i], 4);
      out[i] = static_cast<float>(v);
    } else {
      throw Error(std::string("internal: the lab reads no ") + dtype_name(dtype_) + " tensor.");
    }
  }
  return out;
}

int64_t LabCase::max_checked_rows() const {
  constexpr int64_t kElements = int64_t{1} << 21;  // compared per check at most: the host's share of the time
  return std::max<int64_t>(1, kElements / std::max<int64_t>(width_, 1));
}

std::unique_ptr<LabCase> make_case(const KernelInfo& k, const Shape& shape, const std::string& precision) {
  const std::vector<int64_t>& d = shape.dims;
  const DType dt = lab_dtype(precision);
  if (k.name == "layernorm") return make_layernorm_case(d, dt);
  if (k.name == "bias_gelu") return make_bias_gelu_case(d, dt);
  if (k.name == "attention") return make_attention_case(d, dt);
  if (k.name == "embedding") return make_embedding_case(d, dt);
  if (k.name == "residual") return make_residual_case(d, dt);
  if (k.name == "residual_layernorm") return make_residual_layernorm_case(d, dt);
  if (k.name == "quantize") return make_quantize_case(d);
  if (k.name == "amax") return make_amax_case(d);
  if (k.name == "maxpool") return make_maxpool_case(d, dt);
  if (k.name == "avgpool") return make_avgpool_case(d, dt);
  if (k.name == "conv_epilogue") return make_conv_epilogue_case(d, dt);
  if (k.name == "stem") return make_stem_case(d, dt);
  throw Error("internal: the lab has no case for kernel '" + k.name + "'.");
}

}  // namespace laptime::lab

namespace laptime::lab {

void draw(LabTensor& t, InputKind kind, uint32_t seed, float scale, float huge_offset, float huge_scale,
          cudaStream_t stream) {
  switch (kind) {
    case InputKind::Random:
      return t.fill(seed, 0.f, scale, stream);
    case InputKind::Zeros:
      return t.zero(stream);
    case InputKind::Huge:
      return t.fill(seed, huge_offset, huge_scale, stream);
  }
}

}  // namespace laptime::lab
