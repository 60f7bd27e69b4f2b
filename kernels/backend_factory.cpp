#include "kernels/backend_factory.hpp"

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cuda/cuda_backend_loader.hpp"

namespace weft {

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  if (options.kind == BackendKind::cuda) return cuda::load_cuda_backend(options.local_rank);
  return std::make_unique<cpu::CpuBackend>(options.threads, options.local_size);
}

}  // namespace weft
