// What `weft info`'s checks of the CUDA module's kernels share: bf16 conversions, device arrays and
// the comparison of two results.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_errors.hpp"

namespace weft::cuda {

// Rounds to the nearest bf16, ties to even.
inline std::uint16_t to_bf16(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

inline float from_bf16(std::uint16_t x) {
  const std::uint32_t bits = static_cast<std::uint32_t>(x) << 16;
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}

// `bytes` of device memory, freed with the object.
struct DeviceArray {
  void* data = nullptr;
  std::size_t bytes = 0;
  explicit DeviceArray(std::size_t size) : bytes(size) { check_cuda(cudaMalloc(&data, size), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(data); }
  void write_bf16(const std::vector<std::uint16_t>& host) {
    check_cuda(cudaMemcpy(data, host.data(), std::min(bytes, host.size() * 2), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  std::vector<float> read_bf16() const {
    std::vector<std::uint16_t> raw(bytes / 2);
    check_cuda(cudaMemcpy(raw.data(), data, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::vector<float> out;
    for (std::uint16_t x : raw) out.push_back(from_bf16(x));
    return out;
  }
};

// max |a - b| / max |b|.
inline double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double difference = 0, largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference = std::max(difference, static_cast<double>(std::abs(a[i] - b[i])));
    largest = std::max(largest, static_cast<double>(std::abs(b[i])));
  }
  return largest > 0 ? difference / largest : difference;
}

// What an extern "C" check entry point returns: `check`'s report (starting "passed" or "FAILED")
// written into `report`, and 0 when it passed; an exception is a failure that says why.
template <class Check>
int report_check(char* report, std::size_t report_bytes, Check&& check) {
  try {
    const std::string result = check();
    std::snprintf(report, report_bytes, "%s", result.c_str());
    return result.rfind("passed", 0) == 0 ? 0 : 1;
  } catch (const std::exception& failure) {
    std::snprintf(report, report_bytes, "FAILED: %s", failure.what());
    return 1;
  }
}

}  // namespace weft::cuda
