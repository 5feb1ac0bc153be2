#include "tests/support/compare.h"

#include "kernels/convert.cuh"

namespace laptime::test {

DeviceArray::DeviceArray(DType dtype, size_t n)
    : dtype_(dtype), n_(n), buf_(std::max<size_t>(n, 1) * dtype_size(dtype)) {}

DeviceArray::DeviceArray(DType dtype, const std::vector<float>& values) : DeviceArray(dtype, values.size()) {
  DeviceBuffer staging(std::max<size_t>(n_, 1) * sizeof(float));
  CUDA_CHECK(cudaMemcpy(staging.data(), values.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));
  convert_from_f32(dtype_, buf_.data(), staging.as<float>(), static_cast<int64_t>(n_), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}

void DeviceArray::poison() {
  fill_nan(dtype_, buf_.data(), static_cast<int64_t>(n_), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<float> download_f32(DType dtype, const void* src, size_t n) {
  CUDA_CHECK(cudaDeviceSynchronize());  // the layer under test ran on its context's own stream
  DeviceBuffer staging(std::max<size_t>(n, 1) * sizeof(float));
  convert_to_f32(staging.as<float>(), dtype, src, static_cast<int64_t>(n), nullptr);
  std::vector<float> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), staging.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

std::vector<uint8_t> download_bytes(const void* src, size_t n) {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), src, n, cudaMemcpyDeviceToHost));
  return v;
}

DeviceBuffer upload_bytes(const std::vector<uint8_t>& v) {
  DeviceBuffer b(v.size());
  CUDA_CHECK(cudaMemcpy(b.data(), v.data(), v.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  return b;
}

std::vector<float> DeviceArray::download() const { return download_f32(dtype_, buf_.data(), n_); }

}  // namespace laptime::test
