#include "kernels/cuda/cublaslt_gemm.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_errors.hpp"
#include "simulator/core/input_error.hpp"

namespace weft::cuda {
namespace {

constexpr std::size_t kWorkspaceBytes = 32 << 20;

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(status)));
  }
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

Types types_for(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::tf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Dtype::fp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Dtype::bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    default:
      throw InputError("cuBLASLt GEMMs run in fp32, tf32, fp16 and bf16, not " + std::string(kDtypeNames.name(dtype)));
  }
}

}  // namespace

CublasLtGemm::CublasLtGemm() {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
  check_cuda(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc(cuBLASLt workspace)");
}

CublasLtGemm::~CublasLtGemm() {
  for (auto& [shape, plan] : plans_) {
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatrixLayoutDestroy(plan.c);
    cublasLtMatmulDescDestroy(plan.operation);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

int CublasLtGemm::version() { return static_cast<int>(cublasLtGetVersion()); }

const CublasLtGemm::Plan& CublasLtGemm::plan(const GemmShape& shape) {
  const auto key = std::make_tuple(shape.m, shape.n, shape.k, shape.dtype);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  const Types types = types_for(shape.dtype);
  Plan plan;
  check_cublas(cublasLtMatmulDescCreate(&plan.operation, types.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  // Column-major, packed: A is m x k, B is k x n, C is m x n.
  check_cublas(cublasLtMatrixLayoutCreate(&plan.a, types.data, static_cast<std::uint64_t>(shape.m),
                                          static_cast<std::uint64_t>(shape.k), shape.m),
               "cublasLtMatrixLayoutCreate(A)");
  check_cublas(cublasLtMatrixLayoutCreate(&plan.b, types.data, static_cast<std::uint64_t>(shape.k),
                                          static_cast<std::uint64_t>(shape.n), shape.k),
               "cublasLtMatrixLayoutCreate(B)");
  check_cublas(cublasLtMatrixLayoutCreate(&plan.c, types.data, static_cast<std::uint64_t>(shape.m),
                                          static_cast<std::uint64_t>(shape.n), shape.m),
               "cublasLtMatrixLayoutCreate(C)");
  cublasLtMatmulPreference_t preference = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, plan.operation, plan.a, plan.b, plan.c, plan.c,
                                                               preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) throw std::runtime_error("cuBLASLt has no algorithm for this GEMM");
  plan.algorithm = result.algo;
  return plans_.emplace(key, plan).first->second;
}

void CublasLtGemm::run(const GemmShape& shape, const void* a, const void* b, void* c, cudaStream_t stream) {
  const Plan& p = plan(shape);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  check_cublas(cublasLtMatmul(handle_, p.operation, &alpha, a, p.a, b, p.b, &beta, c, p.c, c, p.c, &p.algorithm,
                              workspace_, kWorkspaceBytes, stream),
               "cublasLtMatmul");
}

}  // namespace weft::cuda
