// The flash-attention kernels' tiling and online softmax, run on the host through the same tile
// math the GPU runs, against attention computed directly from its definition.
#include <catch2/catch.hpp>

#include <limits>

#include "kernels/cuda/flash_attention_reference.hpp"
#include "kernels/cuda/flash_attention_tiles.hpp"
#include "tests/support/naive_attention.hpp"

namespace weft {
namespace {

using test::random_values;

std::vector<float> to_float(const std::vector<double>& values) { return {values.begin(), values.end()}; }

void check_close(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) worst = std::max(worst, std::abs(actual[i] - expected[i]));
  CHECK(worst < tolerance);
}

AttentionShape shape_of(long batch, long heads, long queries, long keys, long head_dim, bool causal,
                        long kv_heads = 0) {
  AttentionShape shape;
  shape.kv_heads = kv_heads;
  shape.batch = batch;
  shape.heads = heads;
  shape.queries = queries;
  shape.keys = keys;
  shape.head_dim = head_dim;
  shape.causal = causal;
  return shape;
}

TEST_CASE("the textbook attention gradients agree with finite differences", "[kernels][attention]") {
  // Multi-head, and grouped-query: 4 query heads on 2 key and value heads, whose gradients sum
  // over their group.
  for (const AttentionShape& shape :
       {shape_of(1, 2, 5, 7, 3, false), shape_of(1, 2, 5, 7, 3, true), shape_of(1, 4, 5, 7, 3, true, 2)}) {
    const auto q = random_values(static_cast<std::size_t>(shape.query_bytes() / 4), 1);
    const auto k = random_values(static_cast<std::size_t>(shape.key_bytes() / 4), 2);
    const auto v = random_values(static_cast<std::size_t>(shape.key_bytes() / 4), 3);
    const auto d_o = random_values(q.size(), 4);
    const test::NaiveGradients formula = test::naive_attention_backward(shape, q, k, v, d_o);
    const test::NaiveGradients numeric = test::finite_difference_gradients(shape, q, k, v, d_o);
    for (std::size_t i = 0; i < q.size(); ++i) CHECK(formula.d_q[i] == Approx(numeric.d_q[i]).margin(1e-7));
    for (std::size_t i = 0; i < k.size(); ++i) CHECK(formula.d_k[i] == Approx(numeric.d_k[i]).margin(1e-7));
    for (std::size_t i = 0; i < v.size(); ++i) CHECK(formula.d_v[i] == Approx(numeric.d_v[i]).margin(1e-7));
  }
}

TEST_CASE("the tiled attention matches the direct computation across tile edges", "[kernels][attention]") {
  // Sizes that leave partial tiles in every direction (tiles of 64 and 32 rows), keys beyond
  // queries (causal rows aligned with the last key), and one-row edge cases.
  const std::vector<AttentionShape> shapes = {
      shape_of(2, 3, 70, 70, 16, false),   shape_of(2, 3, 70, 70, 16, true),     shape_of(1, 2, 33, 130, 24, true),
      shape_of(1, 1, 129, 131, 8, false),  shape_of(1, 1, 1, 1, 4, true),        shape_of(1, 1, 64, 96, 128, true),
      shape_of(2, 6, 70, 70, 16, true, 2), shape_of(1, 4, 33, 130, 24, false, 1)};
  for (const AttentionShape& shape : shapes) {
    INFO("heads " << shape.heads << " on " << shape.key_heads() << ", queries " << shape.queries << ", keys "
                  << shape.keys << ", head_dim " << shape.head_dim << ", causal " << shape.causal);
    const long slices = shape.batch * shape.heads;
    const auto q = random_values(static_cast<std::size_t>(slices * shape.queries * shape.head_dim), 11);
    const auto k =
        random_values(static_cast<std::size_t>(shape.batch * shape.key_heads() * shape.keys * shape.head_dim), 12);
    const auto v = random_values(k.size(), 13);
    const auto d_o = random_values(q.size(), 14);
    const test::NaiveAttention expected = test::naive_attention_forward(shape, q, k, v);
    std::vector<float> o(q.size()), lse(static_cast<std::size_t>(slices * shape.queries));
    const auto qf = to_float(q), kf = to_float(k), vf = to_float(v), dof = to_float(d_o);
    cuda::flash_attention_forward_reference(shape, qf.data(), kf.data(), vf.data(), o.data(), lse.data());
    check_close(o, expected.o, 1e-5);
    check_close(lse, expected.lse, 1e-5);

    const test::NaiveGradients gradients = test::naive_attention_backward(shape, q, k, v, d_o);
    std::vector<float> d_q(q.size()), d_k(k.size()), d_v(v.size());
    cuda::flash_attention_backward_reference(shape, qf.data(), kf.data(), vf.data(), o.data(), lse.data(), dof.data(),
                                             d_q.data(), d_k.data(), d_v.data());
    check_close(d_q, gradients.d_q, 1e-4);
    check_close(d_k, gradients.d_k, 1e-4);
    check_close(d_v, gradients.d_v, 1e-4);
  }
}

TEST_CASE("causal tiles skip exactly the keys no query of the tile sees", "[kernels][attention]") {
  using namespace cuda::flash;
  // 128 queries against 128 keys: the query tile at 64 needs keys up to 127, four tiles of 32.
  CHECK(forward_key_tiles(true, 64, 64, 0, 128) == 4);
  CHECK(forward_key_tiles(true, 0, 64, 0, 128) == 2);
  CHECK(forward_key_tiles(false, 0, 64, 0, 128) == 4);
  // With 32 more keys than queries, query 0 sees keys 0..32: the second tile's first key only.
  CHECK(visible_keys(true, 0, 32, 32, 32) == 1);
  CHECK(visible_keys(true, 0, 32, 64, 32) == 0);
  // The key tile at 64 is first seen by query 64 - offset.
  CHECK(backward_first_query_tile(true, 64, 0) == 2);
  CHECK(backward_first_query_tile(true, 64, 64) == 0);
}

TEST_CASE("batch x head slices beyond CUDA's grid limit are refused, without overflowing", "[kernels][attention]") {
  CHECK(cuda::flash::slices_fit_grid(1, 65535));
  CHECK(cuda::flash::slices_fit_grid(255, 257));  // 65,535 slices
  CHECK_FALSE(cuda::flash::slices_fit_grid(256, 257));
  CHECK_FALSE(cuda::flash::slices_fit_grid(65536, 1));
  CHECK_FALSE(cuda::flash::slices_fit_grid(std::numeric_limits<long>::max(), 2));
  CHECK_FALSE(cuda::flash::slices_fit_grid(0, 8));
}

}  // namespace
}  // namespace weft
