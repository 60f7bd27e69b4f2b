#pragma once

// weft's attention kernels' problem (flash_attention.hpp) for an attention shape.
#include "kernels/cuda/flash_attention.hpp"
#include "kernels/kernel_shapes.hpp"

namespace weft::cuda {

inline FlashAttentionProblem flash_attention_problem(const AttentionShape& shape, ElementType type) {
  FlashAttentionProblem p;
  p.batch = shape.batch;
  p.heads = shape.heads;
  p.kv_heads = shape.key_heads();
  p.queries = shape.queries;
  p.keys = shape.keys;
  p.head_dim = static_cast<int>(shape.head_dim);
  p.causal = shape.causal;
  p.type = type;
  return p;
}

}  // namespace weft::cuda
