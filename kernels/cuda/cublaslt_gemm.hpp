#pragma once

#include <cublasLt.h>

#include <map>
#include <tuple>

#include "kernels/kernel_shapes.hpp"

namespace weft::cuda {

// GEMMs through cuBLASLt: fp32, tf32 (fp32 storage, TF32 tensor cores), fp16 and bf16 storage,
// fp32 accumulation, in the three layouts of GemmShape. The matmul description, layouts and the heuristic's first
// algorithm are chosen once per shape and kept.
class CublasLtGemm {
 public:
  CublasLtGemm();
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void run(const GemmShape& shape, const void* a, const void* b, void* c, cudaStream_t stream);
  static int version();

 private:
  struct Plan {
    cublasLtMatmulDesc_t operation = nullptr;
    cublasLtMatrixLayout_t first = nullptr;   // cuBLASLt's A: weft's B
    cublasLtMatrixLayout_t second = nullptr;  // cuBLASLt's B: weft's A
    cublasLtMatrixLayout_t c = nullptr;
    cublasLtMatmulAlgo_t algorithm{};
  };
  const Plan& plan(const GemmShape& shape);

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, Dtype, GemmLayout>, Plan> plans_;
};

}  // namespace weft::cuda
