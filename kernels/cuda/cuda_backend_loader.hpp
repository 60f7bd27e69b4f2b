#pragma once

#include <memory>
#include <string>
#include <utility>

#include "kernels/backend.hpp"

namespace weft::cuda {

// The CUDA backend for the rank `local_rank` of its node (on device local_rank mod devices),
// loaded from the module next to the weft executable. Throws InputError saying why it cannot
// run here: weft built without CUDA, no driver or device, or the module missing.
std::unique_ptr<Backend> load_cuda_backend(int local_rank);

// The CUDA module's attention check (weft_check_cuda_attention): whether it passed, and its report.
std::pair<bool, std::string> check_cuda_attention();
// The CUDA module's GEMM layout check (weft_check_cuda_gemm): whether it passed, and its report.
std::pair<bool, std::string> check_cuda_gemm();

}  // namespace weft::cuda
