#include "kernels/cuda/cuda_probe.hpp"

namespace weft::cuda {

// The build without the CUDA backend (WEFT_CUDA=OFF, or no nvcc found).
CudaProbe probe() {
  CudaProbe result;
  result.error = "weft was built without the CUDA backend (configure with -DWEFT_CUDA=ON where nvcc is installed)";
  return result;
}

}  // namespace weft::cuda
