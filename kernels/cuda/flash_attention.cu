#include "kernels/cuda/device_elements.cuh"
#include "kernels/cuda/flash_attention.hpp"
#include "kernels/cuda/flash_attention_tiles.hpp"

namespace weft {
namespace cuda {
namespace {

using flash::kBackwardKeyTile;
using flash::kBackwardQueryTile;
using flash::kForwardKeyTile;
using flash::kForwardQueryTile;
using flash::kMaxHeadDim;

// Stages rows [first, first + count) of a [rows, head_dim] slice into shared memory as fp32.
template <class T>
__device__ void stage(const T* slice, long first, int count, int head_dim, float* tile) {
  for (int e = threadIdx.x; e < count * head_dim; e += blockDim.x) tile[e] = to_float(slice[first * head_dim + e]);
}

template <class T>
__global__ void forward_kernel(FlashAttentionProblem p, const T* q, const T* k, const T* v, T* o, float* lse) {
  __shared__ float k_tile[kForwardKeyTile * kMaxHeadDim];
  __shared__ float v_tile[kForwardKeyTile * kMaxHeadDim];
  const long slice = blockIdx.y;
  const long key_slice = flash::key_slice_of(slice, p.heads, p.kv_heads);
  const long first_query = static_cast<long>(blockIdx.x) * kForwardQueryTile;
  const int rows = static_cast<int>(min(static_cast<long>(kForwardQueryTile), p.queries - first_query));
  const long query = first_query + threadIdx.x;
  const bool active = threadIdx.x < rows;
  const long offset = p.keys - p.queries;
  const float scale = rsqrtf(static_cast<float>(p.head_dim));
  float q_row[kMaxHeadDim];
  float acc[kMaxHeadDim];
  for (int d = 0; d < p.head_dim; ++d) {
    q_row[d] = active ? to_float(q[(slice * p.queries + query) * p.head_dim + d]) : 0.0f;
    acc[d] = 0.0f;
  }
  flash::RowState state = flash::initial_row_state();
  const long tiles = flash::forward_key_tiles(p.causal, first_query, rows, offset, p.keys);
  for (long tile = 0; tile < tiles; ++tile) {
    const long first_key = tile * kForwardKeyTile;
    const int tile_keys = static_cast<int>(min(static_cast<long>(kForwardKeyTile), p.keys - first_key));
    __syncthreads();
    stage(k + key_slice * p.keys * p.head_dim, first_key, tile_keys, p.head_dim, k_tile);
    stage(v + key_slice * p.keys * p.head_dim, first_key, tile_keys, p.head_dim, v_tile);
    __syncthreads();
    if (!active) continue;
    const int visible = flash::visible_keys(p.causal, query, offset, first_key, tile_keys);
    flash::forward_row_tile(q_row, k_tile, v_tile, visible, p.head_dim, scale, state, acc);
  }
  if (!active) return;
  lse[slice * p.queries + query] = flash::finish_row(state, acc, p.head_dim);
  for (int d = 0; d < p.head_dim; ++d) o[(slice * p.queries + query) * p.head_dim + d] = from_float<T>(acc[d]);
}

template <class T>
__global__ void delta_kernel(long rows, int head_dim, const T* d_o, const T* o, float* delta) {
  const long row = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float a[kMaxHeadDim];
  float b[kMaxHeadDim];
  for (int d = 0; d < head_dim; ++d) {
    a[d] = to_float(d_o[row * head_dim + d]);
    b[d] = to_float(o[row * head_dim + d]);
  }
  delta[row] = flash::row_delta(a, b, head_dim);
}

struct AtomicDq {
  float* dq_tile_base;  // dQ accumulator at the tile's first query row
  int head_dim;
  __device__ void operator()(int i, float coefficient, const float* key_row) {
    for (int d = 0; d < head_dim; ++d) atomicAdd(dq_tile_base + i * head_dim + d, coefficient * key_row[d]);
  }
};

template <class T>
__global__ void backward_kernel(FlashAttentionProblem p, const T* q, const T* k, const T* v, const float* lse,
                                const T* d_o, const float* delta, T* d_k, T* d_v, float* dq_accumulator) {
  __shared__ float q_tile[kBackwardQueryTile * kMaxHeadDim];
  __shared__ float do_tile[kBackwardQueryTile * kMaxHeadDim];
  __shared__ float lse_tile[kBackwardQueryTile];
  __shared__ float delta_tile[kBackwardQueryTile];
  // A block of one key and value head's keys: dK and dV sum over the query heads of its group.
  const long slice = blockIdx.y;
  const long first_query_slice = flash::first_query_slice_of(slice, p.heads, p.kv_heads);
  const long first_key = static_cast<long>(blockIdx.x) * kBackwardKeyTile;
  const long key = first_key + threadIdx.x;
  const bool active = key < p.keys;
  const long offset = p.keys - p.queries;
  const float scale = rsqrtf(static_cast<float>(p.head_dim));
  float k_row[kMaxHeadDim];
  float v_row[kMaxHeadDim];
  float dk[kMaxHeadDim];
  float dv[kMaxHeadDim];
  for (int d = 0; d < p.head_dim; ++d) {
    k_row[d] = active ? to_float(k[(slice * p.keys + key) * p.head_dim + d]) : 0.0f;
    v_row[d] = active ? to_float(v[(slice * p.keys + key) * p.head_dim + d]) : 0.0f;
    dk[d] = 0.0f;
    dv[d] = 0.0f;
  }
  for (long query_slice = first_query_slice; query_slice < first_query_slice + p.heads / p.kv_heads; ++query_slice) {
    const long query_base = query_slice * p.queries;
    for (long tile = flash::backward_first_query_tile(p.causal, first_key, offset);
         tile * kBackwardQueryTile < p.queries; ++tile) {
      const long first_query = tile * kBackwardQueryTile;
      const int rows = static_cast<int>(min(static_cast<long>(kBackwardQueryTile), p.queries - first_query));
      __syncthreads();
      stage(q + query_base * p.head_dim, first_query, rows, p.head_dim, q_tile);
      stage(d_o + query_base * p.head_dim, first_query, rows, p.head_dim, do_tile);
      for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        lse_tile[i] = lse[query_base + first_query + i];
        delta_tile[i] = delta[query_base + first_query + i];
      }
      __syncthreads();
      if (!active) continue;
      AtomicDq add_dq{dq_accumulator + (query_base + first_query) * p.head_dim, p.head_dim};
      flash::backward_key_tile(k_row, v_row, key, q_tile, do_tile, lse_tile, delta_tile, first_query, rows, p.causal,
                               offset, p.head_dim, scale, dk, dv, add_dq);
    }
  }
  if (!active) return;
  for (int d = 0; d < p.head_dim; ++d) {
    d_k[(slice * p.keys + key) * p.head_dim + d] = from_float<T>(dk[d] * scale);
    d_v[(slice * p.keys + key) * p.head_dim + d] = from_float<T>(dv[d]);
  }
}

template <class T>
__global__ void convert_kernel(long count, const float* in, T* out) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = from_float<T>(in[i]);
}

template <class T>
cudaError_t forward(const FlashAttentionProblem& p, const void* q, const void* k, const void* v, void* o, float* lse,
                    cudaStream_t stream) {
  const dim3 grid(blocks_for(p.queries, kForwardQueryTile), static_cast<unsigned>(p.batch * p.heads));
  forward_kernel<T><<<grid, kForwardQueryTile, 0, stream>>>(p, static_cast<const T*>(q), static_cast<const T*>(k),
                                                            static_cast<const T*>(v), static_cast<T*>(o), lse);
  return cudaGetLastError();
}

template <class T>
cudaError_t backward(const FlashAttentionProblem& p, const void* q, const void* k, const void* v, const void* o,
                     const float* lse, const void* d_o, void* d_q, void* d_k, void* d_v, float* dq_accumulator,
                     float* delta, cudaStream_t stream) {
  const long rows = p.batch * p.heads * p.queries;
  const long dq_elements = rows * p.head_dim;
  cudaError_t status = cudaMemsetAsync(dq_accumulator, 0, static_cast<size_t>(dq_elements) * sizeof(float), stream);
  if (status != cudaSuccess) return status;
  delta_kernel<T><<<blocks_for(rows, 128), 128, 0, stream>>>(rows, p.head_dim, static_cast<const T*>(d_o),
                                                             static_cast<const T*>(o), delta);
  const dim3 grid(blocks_for(p.keys, kBackwardKeyTile), static_cast<unsigned>(p.batch * p.kv_heads));
  backward_kernel<T><<<grid, kBackwardKeyTile, 0, stream>>>(
      p, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), lse, static_cast<const T*>(d_o),
      delta, static_cast<T*>(d_k), static_cast<T*>(d_v), dq_accumulator);
  convert_kernel<T>
      <<<blocks_for(dq_elements, 256), 256, 0, stream>>>(dq_elements, dq_accumulator, static_cast<T*>(d_q));
  return cudaGetLastError();
}

// Key and value heads that divide the query heads (0, the struct's default, is no count).
bool valid_heads(const FlashAttentionProblem& p) { return p.kv_heads > 0 && p.heads % p.kv_heads == 0; }

}  // namespace

cudaError_t flash_attention_shared_bytes(size_t* bytes) {
  cudaFuncAttributes forward_attributes{};
  cudaFuncAttributes backward_attributes{};
  cudaError_t status = cudaFuncGetAttributes(&forward_attributes, forward_kernel<float>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&backward_attributes, backward_kernel<float>);
  *bytes = forward_attributes.sharedSizeBytes > backward_attributes.sharedSizeBytes
               ? forward_attributes.sharedSizeBytes
               : backward_attributes.sharedSizeBytes;
  return status;
}

cudaError_t launch_flash_attention_forward(const FlashAttentionProblem& p, const void* q, const void* k, const void* v,
                                           void* o, float* lse, cudaStream_t stream) {
  if (!valid_heads(p)) return cudaErrorInvalidValue;
  return with_element_type(p.type, [&](auto tag) { return forward<decltype(tag)>(p, q, k, v, o, lse, stream); });
}

cudaError_t launch_flash_attention_backward(const FlashAttentionProblem& p, const void* q, const void* k, const void* v,
                                            const void* o, const float* lse, const void* d_o, void* d_q, void* d_k,
                                            void* d_v, float* dq_accumulator, float* delta, cudaStream_t stream) {
  if (!valid_heads(p)) return cudaErrorInvalidValue;
  return with_element_type(p.type, [&](auto tag) {
    return backward<decltype(tag)>(p, q, k, v, o, lse, d_o, d_q, d_k, d_v, dq_accumulator, delta, stream);
  });
}

}  // namespace cuda
}  // namespace weft
