#pragma once

#include <vector>

#include "kernels/kernel_shapes.hpp"

namespace weft::test {

// Attention computed directly in double precision, one score at a time, from the definition:
// P = softmax(Q K^T / sqrt(d)) by rows (causal rows see keys j <= i + keys - queries), O = P V.
// Tensors are flat vectors in the layout of AttentionShape (grouped-query attention included).
struct NaiveAttention {
  std::vector<double> o;
  std::vector<double> lse;
};

NaiveAttention naive_attention_forward(const AttentionShape& shape, const std::vector<double>& q,
                                       const std::vector<double>& k, const std::vector<double>& v);

struct NaiveGradients {
  std::vector<double> d_q;
  std::vector<double> d_k;
  std::vector<double> d_v;
};

// The gradients of sum(dO * O) from the textbook formulas, one element at a time in double:
// dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(P * dP)), dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d).
NaiveGradients naive_attention_backward(const AttentionShape& shape, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v,
                                        const std::vector<double>& d_o);

// The same gradients by central finite differences of naive_attention_forward: slow,
// but independent of any backward formula.
NaiveGradients finite_difference_gradients(const AttentionShape& shape, const std::vector<double>& q,
                                           const std::vector<double>& k, const std::vector<double>& v,
                                           const std::vector<double>& d_o);

// Deterministic values in [-1, 1).
std::vector<double> random_values(std::size_t count, unsigned seed);

}  // namespace weft::test
