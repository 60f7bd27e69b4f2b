#include "kernels/cpu/cpu_attention.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "kernels/cpu/element_conversion.hpp"

namespace weft::cpu {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Column = Eigen::VectorXf;

// Where one (batch, query head) slice of each tensor starts, and the slices' sizes; its keys and
// values are those of its group's key and value head.
struct HeadLayout {
  const AttentionShape& shape;
  std::int64_t head;  // batch x heads + query head

  std::int64_t key_head() const { return head / shape.heads * shape.key_heads() + head % shape.heads / shape.group(); }
  std::int64_t query_offset() const { return head * shape.queries * shape.head_dim * bytes_per_element(shape.dtype); }
  std::int64_t key_offset() const { return key_head() * shape.keys * shape.head_dim * bytes_per_element(shape.dtype); }
  std::int64_t lse_offset() const { return head * shape.queries * 4; }

  RowMatrix load(const std::byte* base, std::int64_t offset, std::int64_t rows) const {
    RowMatrix m(rows, shape.head_dim);
    widen(shape.dtype, base + offset, m.data(), m.size());
    return m;
  }
  // Q, K and V of the slice.
  std::array<RowMatrix, 3> load_qkv(const std::byte* q, const std::byte* k, const std::byte* v) const {
    return {load(q, query_offset(), shape.queries), load(k, key_offset(), shape.keys),
            load(v, key_offset(), shape.keys)};
  }
  void store(const RowMatrix& m, std::byte* base, std::int64_t offset) const {
    narrow(shape.dtype, m.data(), base + offset, m.size());
  }
};

float softmax_scale(const AttentionShape& shape) { return 1.0f / std::sqrt(static_cast<float>(shape.head_dim)); }

// Scaled scores, with the keys a causal query may not see at -infinity.
RowMatrix masked_scores(const AttentionShape& shape, const RowMatrix& q, const RowMatrix& k) {
  RowMatrix s = (q * k.transpose()) * softmax_scale(shape);
  if (shape.causal) {
    const std::int64_t offset = shape.keys - shape.queries;
    for (std::int64_t i = 0; i < shape.queries; ++i) {
      const std::int64_t first_hidden = i + offset + 1;
      if (first_hidden < shape.keys) {
        s.row(i).tail(shape.keys - first_hidden).setConstant(-std::numeric_limits<float>::infinity());
      }
    }
  }
  return s;
}

}  // namespace

void attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) {
  const std::int64_t slices = shape.batch * shape.heads;
#pragma omp parallel for schedule(static)
  for (std::int64_t head = 0; head < slices; ++head) {
    const HeadLayout layout{shape, head};
    const auto [q, k, v] = layout.load_qkv(args.q, args.k, args.v);
    RowMatrix p = masked_scores(shape, q, k);
    const Column row_max = p.rowwise().maxCoeff();
    p = (p.colwise() - row_max).array().exp().matrix();
    const Column row_sum = p.rowwise().sum();
    const RowMatrix o = (p * v).array().colwise() / row_sum.array();
    layout.store(o, args.o, layout.query_offset());
    auto* lse = reinterpret_cast<float*>(args.lse + layout.lse_offset());
    for (std::int64_t i = 0; i < shape.queries; ++i) lse[i] = row_max(i) + std::log(row_sum(i));
  }
}

void attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) {
  // One key and value head at a time: its dK and dV sum over the query heads of its group.
  const std::int64_t key_slices = shape.batch * shape.key_heads();
  const float scale = softmax_scale(shape);
#pragma omp parallel for schedule(static)
  for (std::int64_t key_slice = 0; key_slice < key_slices; ++key_slice) {
    const std::int64_t first_head =
        key_slice / shape.key_heads() * shape.heads + key_slice % shape.key_heads() * shape.group();
    RowMatrix d_k = RowMatrix::Zero(shape.keys, shape.head_dim);
    RowMatrix d_v = RowMatrix::Zero(shape.keys, shape.head_dim);
    for (std::int64_t head = first_head; head < first_head + shape.group(); ++head) {
      const HeadLayout layout{shape, head};
      const auto [q, k, v] = layout.load_qkv(args.q, args.k, args.v);
      const RowMatrix o = layout.load(args.o, layout.query_offset(), shape.queries);
      const RowMatrix d_o = layout.load(args.d_o, layout.query_offset(), shape.queries);
      const Eigen::Map<const Column> lse(reinterpret_cast<const float*>(args.lse + layout.lse_offset()), shape.queries);
      // P = exp(S - lse), zero where masked.
      const RowMatrix p = (masked_scores(shape, q, k).colwise() - lse).array().exp().matrix();
      d_v += p.transpose() * d_o;
      const Column d = (d_o.array() * o.array()).rowwise().sum();  // rowsum(dO o O) = rowsum(P o dP)
      const RowMatrix d_s = (p.array() * ((d_o * v.transpose()).colwise() - d).array()).matrix();
      const RowMatrix d_q = (d_s * k) * scale;
      layout.store(d_q, args.d_q, layout.query_offset());
      d_k += (d_s.transpose() * q) * scale;
    }
    const HeadLayout group{shape, first_head};
    group.store(d_k, args.d_k, group.key_offset());
    group.store(d_v, args.d_v, group.key_offset());
  }
}

}  // namespace weft::cpu
