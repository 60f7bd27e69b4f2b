#pragma once

// Launches weft's flash-attention kernels (flash_attention.cu). Plain C++17 for nvcc.
#include <cuda_runtime_api.h>

#include "kernels/cuda/element_type.hpp"

namespace weft {
namespace cuda {

struct FlashAttentionProblem {
  long batch = 1;
  long heads = 1;
  long kv_heads = 0;  // key and value heads, dividing heads (heads for multi-head attention)
  long queries = 0;
  long keys = 0;
  int head_dim = 0;  // at most flash::kMaxHeadDim
  bool causal = false;
  ElementType type = ElementType::bf16;
};

// The most static shared memory a block of weft's attention kernels uses, in bytes.
cudaError_t flash_attention_shared_bytes(size_t* bytes);

// O and the fp32 log-sum-exp per query row from Q, K, V.
cudaError_t launch_flash_attention_forward(const FlashAttentionProblem& problem, const void* q, const void* k,
                                           const void* v, void* o, float* lse, cudaStream_t stream);

// dQ, dK, dV; `dq_accumulator` (fp32, one per element of Q) and `delta` (fp32, one per query
// row) are scratch the caller provides.
cudaError_t launch_flash_attention_backward(const FlashAttentionProblem& problem, const void* q, const void* k,
                                            const void* v, const void* o, const float* lse, const void* d_o, void* d_q,
                                            void* d_k, void* d_v, float* dq_accumulator, float* delta,
                                            cudaStream_t stream);

}  // namespace cuda
}  // namespace weft
