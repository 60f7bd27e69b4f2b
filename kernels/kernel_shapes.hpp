#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "simulator/core/dtype.hpp"

namespace weft {

// Where a GEMM's operands are transposed, in the row-major terms PyTorch and the simulator use
// (C = op(A) op(B)): a linear layer's forward Y = X W^T is nt, its input gradient dX = dY W is
// nn, its weight gradient dW = dY^T X is tn.
enum class GemmLayout : std::uint8_t { nn, nt, tn };

// C[m, n] = op(A) op(B), every matrix row-major and packed, accumulated in fp32: A is stored
// [m, k] (or [k, m] when transposed, layout tn), B [k, n] (or [n, k], layout nt), C [m, n].
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  Dtype dtype = Dtype::fp32;
  GemmLayout layout = GemmLayout::nn;

  bool a_transposed() const { return layout == GemmLayout::tn; }
  bool b_transposed() const { return layout == GemmLayout::nt; }
  std::int64_t a_bytes() const { return m * k * bytes_per_element(dtype); }
  std::int64_t b_bytes() const { return k * n * bytes_per_element(dtype); }
  std::int64_t c_bytes() const { return m * n * bytes_per_element(dtype); }
};

// Scaled dot-product attention of `queries` query rows against `keys` key rows per (batch,
// head); Q, O, dO, dQ are [batch, heads, queries, head_dim], K, V, dK, dV [batch, kv_heads, keys,
// head_dim], row-major. With grouped-query attention (kv_heads < heads) query head h reads key
// and value head h / (heads / kv_heads); kv_heads 0 means heads (multi-head attention). Causal: query i sees keys j <=
// i + (keys - queries), the last query row aligned with the last key. The log-sum-exp of each query row (fp32) is what
// the backward pass needs of the forward's softmax.
struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t queries = 0;
  std::int64_t keys = 0;
  std::int64_t head_dim = 0;
  bool causal = false;
  Dtype dtype = Dtype::fp32;
  std::int64_t kv_heads = 0;

  std::int64_t key_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  // Query heads per key and value head.
  std::int64_t group() const { return heads / key_heads(); }
  std::int64_t query_bytes() const { return batch * heads * queries * head_dim * bytes_per_element(dtype); }
  std::int64_t key_bytes() const { return batch * key_heads() * keys * head_dim * bytes_per_element(dtype); }
  std::int64_t lse_bytes() const { return batch * heads * queries * 4; }
};

struct AttentionForwardArgs {
  const std::byte* q = nullptr;
  const std::byte* k = nullptr;
  const std::byte* v = nullptr;
  std::byte* o = nullptr;
  std::byte* lse = nullptr;  // fp32
};

struct AttentionBackwardArgs {
  const std::byte* q = nullptr;
  const std::byte* k = nullptr;
  const std::byte* v = nullptr;
  const std::byte* o = nullptr;
  const std::byte* lse = nullptr;  // fp32, from the forward pass
  const std::byte* d_o = nullptr;
  std::byte* d_q = nullptr;
  std::byte* d_k = nullptr;
  std::byte* d_v = nullptr;
};

// A memory-bound op (elementwise, norm, loss, embedding, optimizer): reads `inputs` elements and
// writes `outputs`, each output the scaled sum of the inputs congruent to it modulo `outputs`,
// followed by `flops_per_output` further floating-point operations. Every input is read once and
// every output written once, so the op moves exactly the bytes an op of that shape moves.
struct MemoryBoundShape {
  std::int64_t inputs = 0;
  std::int64_t outputs = 0;
  int flops_per_output = 0;
  Dtype dtype = Dtype::fp32;

  std::int64_t input_bytes() const { return inputs * bytes_per_element(dtype); }
  std::int64_t output_bytes() const { return outputs * bytes_per_element(dtype); }
};

}  // namespace weft

namespace weft {

// An attention shape as people read it: "[2, 32 on 8 kv, 4096, 4096, 128, causal] bf16".
std::string attention_text(const AttentionShape& shape);

// Throw InputError naming what is wrong: sizes must be positive, a causal attention needs at
// least as many keys as queries, a memory-bound op at least one output.
void check_shape(const GemmShape& shape);
void check_shape(const AttentionShape& shape);
void check_shape(const MemoryBoundShape& shape);

}  // namespace weft
