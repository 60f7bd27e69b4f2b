#pragma once

#include <cuda_runtime_api.h>

namespace weft::cuda {

// Throws a runtime error naming `what` and CUDA's message unless `status` is cudaSuccess.
void check_cuda(cudaError_t status, const char* what);

}  // namespace weft::cuda
