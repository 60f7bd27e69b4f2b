#include "kernels/cuda/flash_attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cuda/flash_attention_tiles.hpp"

namespace weft::cuda {
namespace {

using flash::kBackwardKeyTile;
using flash::kBackwardQueryTile;
using flash::kForwardKeyTile;
using flash::kForwardQueryTile;

// Copies rows [first, first + count) of a [rows, head_dim] slice, as a block stages a tile in
// shared memory.
void stage(const float* slice, long first, int count, long head_dim, std::vector<float>& tile) {
  std::copy(slice + first * head_dim, slice + (first + count) * head_dim, tile.begin());
}

int tile_rows(long first, int tile, long total) { return static_cast<int>(std::min<long>(tile, total - first)); }

}  // namespace

void flash_attention_forward_reference(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                       float* o, float* lse) {
  const long hd = shape.head_dim;
  const long offset = shape.keys - shape.queries;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> k_tile(kForwardKeyTile * hd), v_tile(kForwardKeyTile * hd);
  for (long slice = 0; slice < shape.batch * shape.heads; ++slice) {
    const float* q_slice = q + slice * shape.queries * hd;
    const long key_slice = flash::key_slice_of(slice, shape.heads, shape.key_heads());
    const float* k_slice = k + key_slice * shape.keys * hd;
    const float* v_slice = v + key_slice * shape.keys * hd;
    for (long first_query = 0; first_query < shape.queries; first_query += kForwardQueryTile) {
      const int rows = tile_rows(first_query, kForwardQueryTile, shape.queries);
      std::vector<flash::RowState> states(static_cast<std::size_t>(rows), flash::initial_row_state());
      std::vector<float> acc(static_cast<std::size_t>(rows * hd), 0.0f);
      const long tiles = flash::forward_key_tiles(shape.causal, first_query, rows, offset, shape.keys);
      for (long tile = 0; tile < tiles; ++tile) {
        const long first_key = tile * kForwardKeyTile;
        const int tile_keys = tile_rows(first_key, kForwardKeyTile, shape.keys);
        stage(k_slice, first_key, tile_keys, hd, k_tile);
        stage(v_slice, first_key, tile_keys, hd, v_tile);
        for (int r = 0; r < rows; ++r) {
          const long query = first_query + r;
          const int visible = flash::visible_keys(shape.causal, query, offset, first_key, tile_keys);
          flash::forward_row_tile(q_slice + query * hd, k_tile.data(), v_tile.data(), visible, static_cast<int>(hd),
                                  scale, states[static_cast<std::size_t>(r)], acc.data() + r * hd);
        }
      }
      for (int r = 0; r < rows; ++r) {
        const long query = first_query + r;
        float* row = acc.data() + r * hd;
        lse[slice * shape.queries + query] =
            flash::finish_row(states[static_cast<std::size_t>(r)], row, static_cast<int>(hd));
        std::copy(row, row + hd, o + (slice * shape.queries + query) * hd);
      }
    }
  }
}

void flash_attention_backward_reference(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                        const float* o, const float* lse, const float* d_o, float* d_q, float* d_k,
                                        float* d_v) {
  const long hd = shape.head_dim;
  const long offset = shape.keys - shape.queries;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const long rows_total = shape.batch * shape.heads * shape.queries;
  // The pre-pass kernel: D per query row. dQ accumulates over key tiles (atomically on a GPU).
  std::vector<float> delta(static_cast<std::size_t>(rows_total));
  for (long row = 0; row < rows_total; ++row)
    delta[static_cast<std::size_t>(row)] = flash::row_delta(d_o + row * hd, o + row * hd, static_cast<int>(hd));
  std::fill(d_q, d_q + rows_total * hd, 0.0f);
  std::vector<float> q_tile(kBackwardQueryTile * hd), do_tile(kBackwardQueryTile * hd);
  std::vector<float> lse_tile(kBackwardQueryTile), delta_tile(kBackwardQueryTile);
  // A key block sums dK and dV over the query heads of its group.
  for (long key_slice = 0; key_slice < shape.batch * shape.key_heads(); ++key_slice) {
    const long key_base = key_slice * shape.keys;
    const long first_slice = flash::first_query_slice_of(key_slice, shape.heads, shape.key_heads());
    for (long first_key = 0; first_key < shape.keys; first_key += kBackwardKeyTile) {
      const int keys = tile_rows(first_key, kBackwardKeyTile, shape.keys);
      std::vector<float> dk(static_cast<std::size_t>(keys * hd), 0.0f), dv(static_cast<std::size_t>(keys * hd), 0.0f);
      for (long slice = first_slice; slice < first_slice + shape.group(); ++slice) {
        const long query_base = slice * shape.queries;
        for (long tile = flash::backward_first_query_tile(shape.causal, first_key, offset);
             tile * kBackwardQueryTile < shape.queries; ++tile) {
          const long first_query = tile * kBackwardQueryTile;
          const int rows = tile_rows(first_query, kBackwardQueryTile, shape.queries);
          stage(q + query_base * hd, first_query, rows, hd, q_tile);
          stage(d_o + query_base * hd, first_query, rows, hd, do_tile);
          std::copy(lse + query_base + first_query, lse + query_base + first_query + rows, lse_tile.begin());
          std::copy(delta.begin() + query_base + first_query, delta.begin() + query_base + first_query + rows,
                    delta_tile.begin());
          auto add_dq = [&](int i, float coefficient, const float* key_row) {
            float* dq_row = d_q + (query_base + first_query + i) * hd;
            for (long d = 0; d < hd; ++d) dq_row[d] += coefficient * key_row[d];
          };
          for (int r = 0; r < keys; ++r) {
            const long key = first_key + r;
            flash::backward_key_tile(k + (key_base + key) * hd, v + (key_base + key) * hd, key, q_tile.data(),
                                     do_tile.data(), lse_tile.data(), delta_tile.data(), first_query, rows,
                                     shape.causal, offset, static_cast<int>(hd), scale, dk.data() + r * hd,
                                     dv.data() + r * hd, add_dq);
          }
        }
      }
      for (long i = 0; i < keys * hd; ++i) {
        d_k[(key_base + first_key) * hd + i] = dk[static_cast<std::size_t>(i)] * scale;
        d_v[(key_base + first_key) * hd + i] = dv[static_cast<std::size_t>(i)];
      }
    }
  }
}

}  // namespace weft::cuda
