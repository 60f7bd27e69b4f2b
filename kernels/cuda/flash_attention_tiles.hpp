#pragma once

// The tile-level math of weft's flash-attention kernels (flash_attention.cu), shared with their
// host reference (flash_attention_reference.cpp) so that the CPU tests check the very code the
// GPU runs. Plain C++17: nvcc compiles it for the device, the host compiler for the reference.
#include <math.h>

#if defined(__CUDACC__)
#define WEFT_HOST_DEVICE __host__ __device__
#else
#define WEFT_HOST_DEVICE
#endif

namespace weft {
namespace cuda {
namespace flash {

// Forward: a block of kForwardQueryTile threads, one per query row, walks the key tiles of
// kForwardKeyTile rows, each staged in shared memory. Backward: a block of kBackwardKeyTile
// threads, one per key row, walks the query tiles of kBackwardQueryTile rows.
constexpr int kForwardQueryTile = 64;
constexpr int kForwardKeyTile = 32;
constexpr int kBackwardKeyTile = 64;
constexpr int kBackwardQueryTile = 32;
constexpr int kMaxHeadDim = 128;

// Both kernels' grids run batch x heads blocks in y, which CUDA bounds at 65,535.
constexpr long kMaxGridY = 65535;
// Whether `batch` x `heads` slices fit the grid (divided, not multiplied: the product may overflow).
WEFT_HOST_DEVICE inline bool slices_fit_grid(long batch, long heads) {
  return batch > 0 && heads > 0 && batch <= kMaxGridY / heads;
}

// Grouped-query attention: the key and value slice (batch x kv_heads + kv head) that query slice
// `slice` (batch x heads + head) reads, and the first query slice of key slice `key_slice`'s group.
WEFT_HOST_DEVICE inline long key_slice_of(long slice, long heads, long kv_heads) {
  return slice / heads * kv_heads + slice % heads / (heads / kv_heads);
}
WEFT_HOST_DEVICE inline long first_query_slice_of(long key_slice, long heads, long kv_heads) {
  return key_slice / kv_heads * heads + key_slice % kv_heads * (heads / kv_heads);
}

// The online softmax of one query row over the key tiles seen so far: the largest score and the
// sum of exp(score - max); the output accumulator holds sum of exp(score - max) * v.
struct RowState {
  float max;
  float sum;
};

WEFT_HOST_DEVICE inline RowState initial_row_state() { return RowState{-INFINITY, 0.0f}; }

// How many leading keys of the tile starting at `first_key` (of `tile_keys`) query `query` sees:
// causal rows see keys up to query + offset, where offset = keys - queries aligns the last query
// with the last key.
WEFT_HOST_DEVICE inline int visible_keys(bool causal, long query, long offset, long first_key, int tile_keys) {
  if (!causal) return tile_keys;
  const long visible = query + offset - first_key + 1;
  return visible < 0 ? 0 : (visible > tile_keys ? tile_keys : static_cast<int>(visible));
}

// Key tiles a causal query tile [first_query, first_query + rows) needs: those up to the last
// key its last row sees.
WEFT_HOST_DEVICE inline long forward_key_tiles(bool causal, long first_query, int rows, long offset, long keys) {
  const long all = (keys + kForwardKeyTile - 1) / kForwardKeyTile;
  if (!causal) return all;
  const long last_key = first_query + rows - 1 + offset;
  const long needed = last_key / kForwardKeyTile + 1;
  return needed < all ? needed : all;
}

// The first query tile that sees any key of the key tile starting at `first_key`.
WEFT_HOST_DEVICE inline long backward_first_query_tile(bool causal, long first_key, long offset) {
  if (!causal) return 0;
  const long first_query = first_key - offset;
  return first_query <= 0 ? 0 : first_query / kBackwardQueryTile;
}

WEFT_HOST_DEVICE inline float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
  for (int d = 0; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

// One query row against the first `visible` keys of a staged tile (k_tile, v_tile: rows of
// head_dim floats): scores, the online softmax update, and the rescaled output accumulator.
WEFT_HOST_DEVICE inline void forward_row_tile(const float* q, const float* k_tile, const float* v_tile, int visible,
                                              int head_dim, float scale, RowState& state, float* acc) {
  if (visible <= 0) return;
  float scores[kForwardKeyTile];
  float tile_max = -INFINITY;
  for (int j = 0; j < visible; ++j) {
    scores[j] = dot(q, k_tile + j * head_dim, head_dim) * scale;
    tile_max = fmaxf(tile_max, scores[j]);
  }
  const float new_max = fmaxf(state.max, tile_max);
  const float correction = expf(state.max - new_max);  // 0 for the first tile (max = -inf)
  state.sum *= correction;
  for (int d = 0; d < head_dim; ++d) acc[d] *= correction;
  for (int j = 0; j < visible; ++j) {
    const float p = expf(scores[j] - new_max);
    state.sum += p;
    const float* v = v_tile + j * head_dim;
    for (int d = 0; d < head_dim; ++d) acc[d] += p * v[d];
  }
  state.max = new_max;
}

// Normalizes the accumulator into the output row; returns the row's log-sum-exp.
WEFT_HOST_DEVICE inline float finish_row(const RowState& state, float* acc, int head_dim) {
  const float inverse = 1.0f / state.sum;
  for (int d = 0; d < head_dim; ++d) acc[d] *= inverse;
  return state.max + logf(state.sum);
}

// D_i = rowsum(dO_i * O_i), which equals rowsum(P_i * dP_i) and enters every dS_ij.
WEFT_HOST_DEVICE inline float row_delta(const float* d_o, const float* o, int head_dim) {
  return dot(d_o, o, head_dim);
}

// One key row (k, v at index `key`) against a staged query tile of `rows` rows starting at
// `first_query` (q_tile, do_tile: rows of head_dim floats; lse, delta: one per row): adds to the
// key's dK and dV accumulators, and through add_dq(row, coefficient, k) the coefficient * k each
// query's dQ receives. dK is accumulated unscaled (the caller multiplies by `scale` once).
template <class AddDq>
WEFT_HOST_DEVICE inline void backward_key_tile(const float* k, const float* v, long key, const float* q_tile,
                                               const float* do_tile, const float* lse, const float* delta,
                                               long first_query, int rows, bool causal, long offset, int head_dim,
                                               float scale, float* dk, float* dv, AddDq& add_dq) {
  for (int i = 0; i < rows; ++i) {
    if (causal && key > first_query + i + offset) continue;
    const float* q = q_tile + i * head_dim;
    const float* d_o = do_tile + i * head_dim;
    const float p = expf(dot(q, k, head_dim) * scale - lse[i]);
    const float ds = p * (dot(d_o, v, head_dim) - delta[i]);
    for (int d = 0; d < head_dim; ++d) {
      dv[d] += p * d_o[d];
      dk[d] += ds * q[d];
    }
    add_dq(i, ds * scale, k);
  }
}

}  // namespace flash
}  // namespace cuda
}  // namespace weft
