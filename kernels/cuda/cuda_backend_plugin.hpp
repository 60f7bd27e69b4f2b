#pragma once

#include <cstddef>

#include "kernels/backend.hpp"

// The file name of the CUDA backend module, installed next to the weft executable.
#define WEFT_CUDA_BACKEND_MODULE "libweft_cuda_backend.so"

// A new CUDA backend on `device`, or nullptr with the reason in `error`.
extern "C" weft::Backend* weft_create_cuda_backend(int device, char* error, std::size_t error_bytes);
using WeftCreateCudaBackend = decltype(&weft_create_cuda_backend);

// Compares cuDNN's attention with weft's reference kernel on one shape; 0 when they agree (or
// cuDNN is not built in), with what was found in `report`.
extern "C" int weft_check_cuda_attention(char* report, std::size_t report_bytes);
using WeftCheckCudaAttention = decltype(&weft_check_cuda_attention);

// Compares cuBLASLt's GEMMs in the three layouts with the direct product on one shape; 0 when
// they agree, with what was found in `report`.
extern "C" int weft_check_cuda_gemm(char* report, std::size_t report_bytes);
using WeftCheckCudaGemm = decltype(&weft_check_cuda_gemm);
