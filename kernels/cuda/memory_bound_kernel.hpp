#pragma once

// Launches the memory-bound kernel (memory_bound.cu). Plain C++17 for nvcc.
#include <cuda_runtime_api.h>

#include "kernels/cuda/element_type.hpp"

namespace weft {
namespace cuda {

// The memory-bound op of MemoryBoundShape (kernels/kernel_shapes.hpp) on the GPU.
cudaError_t launch_memory_bound(long inputs, long outputs, int flops_per_output, ElementType type, const void* in,
                                void* out, cudaStream_t stream);

}  // namespace cuda
}  // namespace weft
