#pragma once

// Plain C++17: included by both host C++20 code and nvcc-compiled sources.
#include <cstddef>
#include <string>
#include <vector>

namespace weft {
namespace cuda {

struct CudaDeviceInfo {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

// What the CUDA backend can do on this machine.
struct CudaProbe {
  bool built = false;         // weft was compiled with the CUDA backend
  std::string architectures;  // device code targets, e.g. "sm_80 sm_90"
  int runtime_version = 0;    // cudaRuntimeGetVersion, e.g. 13000
  std::vector<CudaDeviceInfo> devices;
  bool kernel_self_test_passed = false;  // a kernel ran on device 0 and wrote what was expected
  std::string error;                     // why the backend cannot run here; empty when it can
};

// Queries the runtime and, when a device is present, launches a small kernel on it.
CudaProbe probe();

}  // namespace cuda
}  // namespace weft
