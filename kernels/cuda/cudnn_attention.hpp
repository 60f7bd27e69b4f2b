#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <tuple>

#include "kernels/backend.hpp"
#include "kernels/cuda/cudnn_graph.hpp"

namespace weft::cuda {

// Scaled-dot-product attention as PyTorch runs it on NVIDIA GPUs: cuDNN's fused flash attention,
// forward (with the log-sum-exp statistics) and backward, in bf16 and fp16, causal or not,
// multi-head or grouped-query (keys and values of fewer heads, their gradients summed over each
// group), in weft's [batch, heads, rows, head_dim] layout. cuDNN 9.19 has no causal mask on its SDPA
// operation, so the graphs are composed of primitive operations in the pattern cuDNN's fused
// attention engines recognise: the pattern cudnn-frontend v1.19.1 emits (NVIDIA/cudnn-frontend
// 7500fd84, include/cudnn_frontend/node/scaled_dot_product_flash_attention.h). Plans are built on
// a shape's first call and kept.
class CudnnAttention {
 public:
  CudnnAttention();
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  static int version();
  // Why cuDNN cannot run `shape` (empty when it can): dtype, head size, masks it lacks.
  static std::string unsupported(const AttentionShape& shape, int compute_capability_major);

  void forward(const AttentionShape& shape, const AttentionForwardArgs& args, cudaStream_t stream);
  void backward(const AttentionShape& shape, const AttentionBackwardArgs& args, cudaStream_t stream);

 private:
  // batch, heads, key and value heads, queries, keys, head_dim, causal, dtype
  using Key =
      std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, Dtype>;
  const cudnn::Plan& plan(std::map<Key, cudnn::Plan>& plans, const AttentionShape& shape, bool backward);
  std::byte* workspace(std::int64_t bytes);

  cudnnHandle_t handle_ = nullptr;
  std::map<Key, cudnn::Plan> forward_plans_;
  std::map<Key, cudnn::Plan> backward_plans_;
  Buffer workspace_;
};

}  // namespace weft::cuda
