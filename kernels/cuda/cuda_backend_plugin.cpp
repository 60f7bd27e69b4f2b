// The entry point of the CUDA backend module (libweft_cuda_backend.so), which weft loads only
// when asked for the cuda backend, so that starting weft never loads cuBLASLt, NCCL and CUPTI.
#include <cstdio>
#include <exception>

#include "kernels/cuda/cuda_backend.hpp"
#include "kernels/cuda/cuda_backend_plugin.hpp"

extern "C" weft::Backend* weft_create_cuda_backend(int device, char* error, std::size_t error_bytes) {
  try {
    return new weft::cuda::CudaBackend(device);
  } catch (const std::exception& failure) {
    std::snprintf(error, error_bytes, "%s", failure.what());
    return nullptr;
  }
}
