#include "kernels/cuda/cuda_backend_loader.hpp"

#include <dlfcn.h>

#include <array>
#include <filesystem>
#include <string>

#include "kernels/cuda/cuda_backend_plugin.hpp"
#include "kernels/cuda/cuda_probe.hpp"
#include "simulator/core/input_error.hpp"

namespace weft::cuda {

std::unique_ptr<Backend> load_cuda_backend(int local_rank) {
  const CudaProbe found = probe();
  if (!found.error.empty()) throw InputError("--backend cuda: " + found.error);
  const std::filesystem::path module =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / WEFT_CUDA_BACKEND_MODULE;
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw InputError("--backend cuda: cannot load " + module.string() + ": " + dlerror());
  auto create = reinterpret_cast<WeftCreateCudaBackend>(dlsym(handle, "weft_create_cuda_backend"));
  if (create == nullptr) throw InputError("--backend cuda: " + module.string() + " is not a weft CUDA backend");
  std::array<char, 512> error{};
  const int device = local_rank % static_cast<int>(found.devices.size());
  Backend* backend = create(device, error.data(), error.size());
  if (backend == nullptr) throw InputError("--backend cuda: " + std::string(error.data()));
  return std::unique_ptr<Backend>(backend);
}

}  // namespace weft::cuda
