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
    cublasLtMatrixLayoutDestroy(plan.first);
    cublasLtMatrixLayoutDestroy(plan.second);
    cublasLtMatrixLayoutDestroy(plan.c);
    cublasLtMatmulDescDestroy(plan.operation);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

int CublasLtGemm::version() { return static_cast<int>(cublasLtGetVersion()); }

const CublasLtGemm::Plan& CublasLtGemm::plan(const GemmShape& shape) {
  const auto key = std::make_tuple(shape.m, shape.n, shape.k, shape.dtype, shape.layout);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  const Types types = types_for(shape.dtype);
  Plan plan;
  check_cublas(cublasLtMatmulDescCreate(&plan.operation, types.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  // cuBLASLt is column-major, weft's operands row-major: a row-major matrix is its transpose
  // column-major, so cuBLASLt computes C^T[n, m] = op(B)^T op(A)^T with B as its first operand.
  // Row-major B stored [k, n] is column-major n x k (no transpose); stored [n, k] (nt) it is
  // k x n, transposed. Row-major A stored [m, k] is column-major k x m; stored [k, m] (tn) it is
  // m x k, transposed.
  const cublasOperation_t first_op = shape.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t second_op = shape.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSA, &first_op, sizeof(first_op)),
               "cublasLtMatmulDescSetAttribute(TRANSA)");
  check_cublas(
      cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSB, &second_op, sizeof(second_op)),
      "cublasLtMatmulDescSetAttribute(TRANSB)");
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  const std::int64_t first_rows = shape.b_transposed() ? shape.k : shape.n;
  const std::int64_t first_cols = shape.b_transposed() ? shape.n : shape.k;
  const std::int64_t second_rows = shape.a_transposed() ? shape.m : shape.k;
  const std::int64_t second_cols = shape.a_transposed() ? shape.k : shape.m;
  check_cublas(cublasLtMatrixLayoutCreate(&plan.first, types.data, u(first_rows), u(first_cols), first_rows),
               "cublasLtMatrixLayoutCreate(B)");
  check_cublas(cublasLtMatrixLayoutCreate(&plan.second, types.data, u(second_rows), u(second_cols), second_rows),
               "cublasLtMatrixLayoutCreate(A)");
  check_cublas(cublasLtMatrixLayoutCreate(&plan.c, types.data, u(shape.n), u(shape.m), shape.n),
               "cublasLtMatrixLayoutCreate(C)");
  cublasLtMatmulPreference_t preference = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = kWorkspaceBytes;
  const cublasStatus_t limited = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  if (limited != CUBLAS_STATUS_SUCCESS) {
    cublasLtMatmulPreferenceDestroy(preference);
    check_cublas(limited, "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, plan.operation, plan.first, plan.second, plan.c,
                                                               plan.c, preference, 1, &result, &found);
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
  // The plan's first operand is B (see plan()).
  check_cublas(cublasLtMatmul(handle_, p.operation, &alpha, b, p.first, a, p.second, &beta, c, p.c, c, p.c,
                              &p.algorithm, workspace_, kWorkspaceBytes, stream),
               "cublasLtMatmul");
}

}  // namespace weft::cuda
