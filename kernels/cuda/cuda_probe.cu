#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_probe.hpp"

namespace weft {
namespace cuda {
namespace {

// Writes a counter-based hash of each index: a non-trivial pattern the host can check exactly.
__global__ void write_index_hash(std::uint32_t* out, std::uint32_t count) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = (i * 2654435761u) ^ (i >> 3);
}

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

bool run_self_test(std::string& error) {
  constexpr std::uint32_t kCount = 1 << 16;
  std::uint32_t* device_buffer = nullptr;
  cudaError_t status = cudaMalloc(&device_buffer, kCount * sizeof(std::uint32_t));
  if (status != cudaSuccess) {
    error = "cudaMalloc failed: " + describe(status);
    return false;
  }
  write_index_hash<<<kCount / 256, 256>>>(device_buffer, kCount);
  std::vector<std::uint32_t> host(kCount);
  status = cudaGetLastError();
  if (status == cudaSuccess) {
    status = cudaMemcpy(host.data(), device_buffer, kCount * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
  }
  cudaFree(device_buffer);
  if (status != cudaSuccess) {
    error = "self-test kernel failed: " + describe(status);
    return false;
  }
  for (std::uint32_t i = 0; i < kCount; ++i) {
    if (host[i] != ((i * 2654435761u) ^ (i >> 3))) {
      error = "self-test kernel wrote a wrong value at index " + std::to_string(i);
      return false;
    }
  }
  return true;
}

}  // namespace

CudaProbe probe() {
  CudaProbe result;
  result.built = true;
  result.architectures = WEFT_CUDA_ARCHITECTURES;
  cudaRuntimeGetVersion(&result.runtime_version);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    result.error = "no usable CUDA device (" + describe(status) + ")";
    return result;
  }
  if (count == 0) {
    result.error = "no CUDA device found";
    return result;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, d) != cudaSuccess) continue;
    result.devices.push_back({properties.name, properties.major, properties.minor, properties.multiProcessorCount,
                              properties.totalGlobalMem});
  }
  result.kernel_self_test_passed = run_self_test(result.error);
  return result;
}

}  // namespace cuda
}  // namespace weft
