#include "kernels/cuda/cuda_errors.hpp"

#include <stdexcept>
#include <string>

namespace weft::cuda {

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(status) + ": " +
                           cudaGetErrorString(status));
}

}  // namespace weft::cuda
