#pragma once

#include "kernels/kernel_shapes.hpp"

namespace weft::cpu {

// Attention with Eigen, one (batch, head) at a time, each over its whole score matrix in fp32:
// S = Q K^T / sqrt(head_dim), masked when causal, P = softmax(S) by rows, O = P V; the backward
// pass recomputes P from the saved log-sum-exp. Parallel over (batch, head) with OpenMP.
void attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args);
void attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args);

}  // namespace weft::cpu
