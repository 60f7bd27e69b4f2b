#include "kernels/cuda/cuda_backend_loader.hpp"

#include <dlfcn.h>

#include <array>
#include <filesystem>
#include <string>

#include "kernels/cuda/cuda_backend_plugin.hpp"
#include "kernels/cuda/cuda_probe.hpp"
#include "simulator/core/input_error.hpp"

namespace weft::cuda {

namespace {

// The module next to the weft executable, loaded once.
void* backend_module() {
  const std::filesystem::path module =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / WEFT_CUDA_BACKEND_MODULE;
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw InputError("--backend cuda: cannot load " + module.string() + ": " + dlerror());
  return handle;
}

template <class Function>
Function module_function(const char* name) {
  auto function = reinterpret_cast<Function>(dlsym(backend_module(), name));
  if (function == nullptr) {
    throw InputError(std::string("--backend cuda: ") + WEFT_CUDA_BACKEND_MODULE + " is not a weft CUDA backend");
  }
  return function;
}

}  // namespace

std::unique_ptr<Backend> load_cuda_backend(int local_rank) {
  const CudaProbe found = probe();
  if (!found.error.empty()) throw InputError("--backend cuda: " + found.error);
  auto create = module_function<WeftCreateCudaBackend>("weft_create_cuda_backend");
  std::array<char, 512> error{};
  const int device = local_rank % static_cast<int>(found.devices.size());
  Backend* backend = create(device, error.data(), error.size());
  if (backend == nullptr) throw InputError("--backend cuda: " + std::string(error.data()));
  return std::unique_ptr<Backend>(backend);
}

std::pair<bool, std::string> check_cuda_attention() {
  std::array<char, 1024> report{};
  const int failed = module_function<WeftCheckCudaAttention>("weft_check_cuda_attention")(report.data(), report.size());
  return {failed == 0, report.data()};
}

std::pair<bool, std::string> check_cuda_gemm() {
  std::array<char, 1024> report{};
  const int failed = module_function<WeftCheckCudaGemm>("weft_check_cuda_gemm")(report.data(), report.size());
  return {failed == 0, report.data()};
}

}  // namespace weft::cuda
