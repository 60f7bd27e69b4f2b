#include "kernels/cuda/cudnn_attention.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/cuda_errors.hpp"

namespace weft::cuda {
namespace {

using cudnn::Descriptor;
using cudnn::Dims;
using cudnn::TensorSpec;

// Tensors given to each execution; the virtual ones are numbered from kFirstVirtual.
enum Uid : std::int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kNegativeInfinity,
  kOutputGradient,
  kQueryGradient,
  kKeyGradient,
  kValueGradient,
  kOne,
  kSoftmaxSum,
  kQueryGradientAccumulator,
  kFirstVirtual = 100
};

cudnnDataType_t io_type(Dtype dtype) { return dtype == Dtype::fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16; }

// The graph under construction: its operations in emission order, and the shape's tensors.
struct AttentionGraph {
  const AttentionShape& s;
  cudnnDataType_t io;
  std::vector<Descriptor> ops;
  std::int64_t next_uid = kFirstVirtual;

  explicit AttentionGraph(const AttentionShape& shape) : s(shape), io(io_type(shape.dtype)) {}

  Dims rows(std::int64_t count, std::int64_t width, std::int64_t heads = 0) const {
    return {s.batch, heads > 0 ? heads : s.heads, count, width};
  }
  // [b, h, rows, width] in weft's packed layout, or, transposed, its last two dimensions swapped
  // over the same memory; `heads` 0: the query heads.
  Descriptor io_tensor(std::int64_t uid, std::int64_t count, std::int64_t width, bool transposed = false,
                       std::int64_t heads = 0) const {
    Dims dims = rows(count, width, heads);
    Dims strides = cudnn::packed(dims);
    if (transposed) {
      std::swap(dims[2], dims[3]);
      std::swap(strides[2], strides[3]);
    }
    return cudnn::tensor({uid, dims, strides, io});
  }
  Descriptor scalar(std::int64_t uid) const {
    return cudnn::tensor({uid, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true});
  }
  Descriptor statistics(std::int64_t uid, bool is_virtual) {
    const Dims dims = rows(s.queries, 1);
    return cudnn::tensor({is_virtual ? next_uid++ : uid, dims, cudnn::packed(dims), CUDNN_DATA_FLOAT, is_virtual});
  }
  Descriptor virtual_tensor(const Dims& dims, const Dims& strides, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return cudnn::tensor({next_uid++, dims, strides, type, true});
  }
  Descriptor scores(cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    const Dims dims = rows(s.queries, s.keys);
    return virtual_tensor(dims, cudnn::packed(dims), type);
  }
  // [b, h, keys, queries] over a [b, h, queries, keys] tensor's memory.
  Descriptor transposed_scores() {
    const Dims dims = rows(s.keys, s.queries);
    return virtual_tensor(dims, {s.heads * s.queries * s.keys, s.queries * s.keys, 1, s.keys}, io);
  }

  Descriptor unary(cudnnPointwiseMode_t mode, const Descriptor& x, Descriptor y) {
    ops.push_back(cudnn::pointwise(mode, x, nullptr, nullptr, y));
    return y;
  }
  Descriptor binary(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor& b, Descriptor y) {
    ops.push_back(cudnn::pointwise(mode, x, &b, nullptr, y));
    return y;
  }
  Descriptor matmul(const Descriptor& a, const Descriptor& b, Descriptor c) {
    ops.push_back(cudnn::matmul(a, b, c));
    return c;
  }
  Descriptor reduce(cudnnReduceTensorOp_t op, const Descriptor& x, Descriptor y) {
    ops.push_back(cudnn::reduction(op, x, y));
    return y;
  }
  // dK or dV = a [b, h, keys, d] product: straight into the output with multi-head attention;
  // with grouped-query attention into a full-head virtual tensor summed over each group into the
  // [b, kv_heads, keys, d] output, as cudnn-frontend's graph does.
  void key_gradient(const Descriptor& a, const Descriptor& b, std::int64_t uid) {
    const Descriptor out = io_tensor(uid, s.keys, s.head_dim, false, s.key_heads());
    if (s.key_heads() == s.heads) {
      matmul(a, b, out);
      return;
    }
    const Dims full = rows(s.keys, s.head_dim);
    reduce(CUDNN_REDUCE_TENSOR_ADD, matmul(a, b, virtual_tensor(full, cudnn::packed(full), io)), out);
  }

  // Scores above the diagonal (key after query) replaced by -infinity: rows and columns indexed,
  // compared, selected.
  Descriptor causal_mask(const Descriptor& scores_in) {
    const Dims dims = rows(s.queries, s.keys);
    const Dims strides = cudnn::packed(dims);
    Descriptor row = virtual_tensor(dims, strides, CUDNN_DATA_INT32);
    Descriptor column = virtual_tensor(dims, strides, CUDNN_DATA_INT32);
    ops.push_back(cudnn::pointwise(CUDNN_POINTWISE_GEN_INDEX, scores_in, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2));
    ops.push_back(
        cudnn::pointwise(CUDNN_POINTWISE_GEN_INDEX, scores_in, nullptr, nullptr, column, CUDNN_DATA_FLOAT, 3));
    Descriptor keep = virtual_tensor(dims, strides, CUDNN_DATA_BOOLEAN);
    ops.push_back(cudnn::pointwise(CUDNN_POINTWISE_CMP_GE, row, &column, nullptr, keep, CUDNN_DATA_BOOLEAN));
    Descriptor masked = scores();
    const Descriptor fill = scalar(kNegativeInfinity);
    ops.push_back(cudnn::pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores_in, &fill, &keep, masked));
    return masked;
  }
};

std::vector<Descriptor> forward_ops(const AttentionShape& shape) {
  AttentionGraph g(shape);
  // Keys and values of kv_heads heads: the matmuls broadcast each over its group of query heads.
  const Descriptor q = g.io_tensor(kQ, shape.queries, shape.head_dim);
  const Descriptor k_transposed = g.io_tensor(kK, shape.keys, shape.head_dim, true, shape.key_heads());
  const Descriptor v = g.io_tensor(kV, shape.keys, shape.head_dim, false, shape.key_heads());
  const Descriptor scale = g.scalar(kScale);
  Descriptor s = g.matmul(q, k_transposed, g.scores());
  s = g.binary(CUDNN_POINTWISE_MUL, s, scale, g.scores());
  if (shape.causal) s = g.causal_mask(s);
  const Descriptor max = g.reduce(CUDNN_REDUCE_TENSOR_MAX, s, g.statistics(0, true));
  const Descriptor shifted = g.binary(CUDNN_POINTWISE_SUB, s, max, g.scores());
  const Descriptor e = g.unary(CUDNN_POINTWISE_EXP, shifted, g.scores());
  const Descriptor sum = g.reduce(CUDNN_REDUCE_TENSOR_ADD, e, g.statistics(0, true));
  const Descriptor log_sum = g.unary(CUDNN_POINTWISE_LOG, sum, g.statistics(0, true));
  g.binary(CUDNN_POINTWISE_ADD, max, log_sum, g.statistics(kStats, false));
  const Descriptor p = g.binary(CUDNN_POINTWISE_DIV, e, sum, g.scores(g.io));  // the second matmul reads io type
  g.matmul(p, v, g.io_tensor(kO, shape.queries, shape.head_dim));
  return std::move(g.ops);
}

std::vector<Descriptor> backward_ops(const AttentionShape& shape) {
  AttentionGraph g(shape);
  const std::int64_t b = shape.batch, h = shape.heads, sq = shape.queries, d = shape.head_dim;
  const Descriptor q = g.io_tensor(kQ, sq, d);
  const Descriptor k_transposed = g.io_tensor(kK, shape.keys, d, true, shape.key_heads());
  const Descriptor v_transposed = g.io_tensor(kV, shape.keys, d, true, shape.key_heads());
  const Descriptor o = g.io_tensor(kO, sq, d);
  const Descriptor d_o = g.io_tensor(kOutputGradient, sq, d);
  const Descriptor stats = g.statistics(kStats, false);
  const Descriptor scale = g.scalar(kScale);
  const Descriptor one = g.scalar(kOne);
  // The softmax's row sums of dO * O (the frontend declares this product with these strides).
  const Descriptor product =
      g.binary(CUDNN_POINTWISE_MUL, d_o, o, g.virtual_tensor({b, h, sq, d}, {h * sq * d, sq * d, h * d, 1}));
  const Descriptor row_sum = g.reduce(CUDNN_REDUCE_TENSOR_ADD, product, g.statistics(0, true));
  const Descriptor softmax_sum = g.binary(CUDNN_POINTWISE_MUL, row_sum, one, g.statistics(kSoftmaxSum, false));
  // P, recomputed from the scores and the forward's statistics.
  Descriptor s = g.matmul(q, k_transposed, g.scores());
  s = g.binary(CUDNN_POINTWISE_MUL, s, scale, g.scores());
  s = g.binary(CUDNN_POINTWISE_SUB, s, stats, g.scores());
  if (shape.causal) s = g.causal_mask(s);
  const Descriptor p = g.unary(CUDNN_POINTWISE_EXP, s, g.scores());
  // dV = P^T dO.
  const Descriptor p_transposed = g.transposed_scores();
  g.ops.push_back(cudnn::reshape(p, p_transposed));
  g.key_gradient(p_transposed, d_o, kValueGradient);
  // dS = P * (dO V^T - softmax_sum) * scale.
  Descriptor ds = g.matmul(d_o, v_transposed, g.scores());
  ds = g.binary(CUDNN_POINTWISE_SUB, ds, softmax_sum, g.scores());
  ds = g.binary(CUDNN_POINTWISE_MUL, ds, p, g.scores());
  ds = g.binary(CUDNN_POINTWISE_MUL, ds, scale, g.scores());
  // dK = dS^T Q.
  const Descriptor ds_transposed = g.transposed_scores();
  g.ops.push_back(cudnn::reshape(ds, ds_transposed));
  g.key_gradient(ds_transposed, q, kKeyGradient);
  // dQ = dS K, accumulated in fp32, then converted.
  const Dims k_dims = g.rows(shape.keys, d, shape.key_heads());
  const Descriptor k = g.virtual_tensor(k_dims, cudnn::packed(k_dims));
  g.ops.push_back(cudnn::reshape(k_transposed, k));
  const Dims dq_dims = g.rows(sq, d);
  const Descriptor accumulator =
      g.matmul(ds, k, cudnn::tensor({kQueryGradientAccumulator, dq_dims, cudnn::packed(dq_dims), CUDNN_DATA_FLOAT}));
  g.unary(CUDNN_POINTWISE_IDENTITY, accumulator, g.io_tensor(kQueryGradient, sq, d));
  return std::move(g.ops);
}

// The fp32 buffers the backward graph keeps in its workspace, ahead of the plan's own, each
// starting on a 256-byte boundary as device allocations do.
std::int64_t aligned(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }
std::int64_t accumulator_bytes(const AttentionShape& s) {
  return aligned(s.batch * s.heads * s.queries * s.head_dim * 4);
}
std::int64_t softmax_sum_bytes(const AttentionShape& s) { return aligned(s.batch * s.heads * s.queries * 4); }

}  // namespace

CudnnAttention::CudnnAttention() { cudnn::check(cudnnCreate(&handle_), "cudnnCreate"); }

CudnnAttention::~CudnnAttention() {
  forward_plans_.clear();
  backward_plans_.clear();
  cudnnDestroy(handle_);
}

int CudnnAttention::version() { return static_cast<int>(cudnnGetVersion()); }

std::string CudnnAttention::unsupported(const AttentionShape& shape, int compute_capability_major) {
  if (shape.dtype != Dtype::bf16 && shape.dtype != Dtype::fp16) return "cuDNN's fused attention runs bf16 and fp16";
  if (shape.head_dim % 8 != 0)
    return fmt::format("cuDNN's fused attention needs a head_dim multiple of 8, got {}", shape.head_dim);
  // cudnn-frontend's support surface: head sizes up to 256 on Hopper (sm90), 128 on the others.
  const std::int64_t largest = compute_capability_major == 9 ? 256 : 128;
  if (shape.head_dim > largest) {
    return fmt::format("cuDNN's fused attention runs head_dim up to {} on this GPU, got {}", largest, shape.head_dim);
  }
  if (shape.causal && shape.queries != shape.keys) {
    return fmt::format("weft's cuDNN graph masks square score matrices only; causal with {} queries and {} keys",
                       shape.queries, shape.keys);
  }
  return {};
}

std::byte* CudnnAttention::workspace(std::int64_t bytes) {
  if (workspace_.bytes() < bytes) {
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the old workspace may still be in use
    void* memory = nullptr;
    check_cuda(cudaMalloc(&memory, static_cast<std::size_t>(bytes)), "cudaMalloc(cuDNN workspace)");
    workspace_ =
        Buffer(std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [](std::byte* p) { cudaFree(p); }), bytes);
  }
  return workspace_.data();
}

const cudnn::Plan& CudnnAttention::plan(std::map<Key, cudnn::Plan>& plans, const AttentionShape& s, bool backward) {
  const Key key{s.batch, s.heads, s.key_heads(), s.queries, s.keys, s.head_dim, s.causal, s.dtype};
  if (auto it = plans.find(key); it != plans.end()) return it->second;
  const std::string what = fmt::format("cuDNN attention {} {}", backward ? "backward" : "forward", attention_text(s));
  return plans.emplace(key, cudnn::build_plan(handle_, backward ? backward_ops(s) : forward_ops(s), what.c_str()))
      .first->second;
}

void CudnnAttention::forward(const AttentionShape& shape, const AttentionForwardArgs& args, cudaStream_t stream) {
  const cudnn::Plan& p = plan(forward_plans_, shape, false);
  float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  float negative_infinity = -std::numeric_limits<float>::infinity();
  std::byte* space = workspace(std::max<std::int64_t>(p.workspace_bytes, 1));
  cudnn::check(cudnnSetStream(handle_, stream), "cudnnSetStream");
  std::vector<std::int64_t> uids = {kQ, kK, kV, kO, kStats, kScale};
  std::vector<void*> pointers = {const_cast<std::byte*>(args.q),
                                 const_cast<std::byte*>(args.k),
                                 const_cast<std::byte*>(args.v),
                                 args.o,
                                 args.lse,
                                 &scale};
  if (shape.causal) {
    uids.push_back(kNegativeInfinity);
    pointers.push_back(&negative_infinity);
  }
  cudnn::execute(handle_, p, uids, pointers, space, "cuDNN attention forward");
}

void CudnnAttention::backward(const AttentionShape& shape, const AttentionBackwardArgs& args, cudaStream_t stream) {
  const cudnn::Plan& p = plan(backward_plans_, shape, true);
  float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  float negative_infinity = -std::numeric_limits<float>::infinity();
  float one = 1.0f;
  const std::int64_t accumulator = accumulator_bytes(shape);
  const std::int64_t sums = softmax_sum_bytes(shape);
  std::byte* space = workspace(accumulator + sums + p.workspace_bytes);
  cudnn::check(cudnnSetStream(handle_, stream), "cudnnSetStream");
  std::vector<std::int64_t> uids = {kQ,
                                    kK,
                                    kV,
                                    kO,
                                    kOutputGradient,
                                    kStats,
                                    kScale,
                                    kOne,
                                    kQueryGradient,
                                    kKeyGradient,
                                    kValueGradient,
                                    kQueryGradientAccumulator,
                                    kSoftmaxSum};
  std::vector<void*> pointers = {const_cast<std::byte*>(args.q),
                                 const_cast<std::byte*>(args.k),
                                 const_cast<std::byte*>(args.v),
                                 const_cast<std::byte*>(args.o),
                                 const_cast<std::byte*>(args.d_o),
                                 const_cast<std::byte*>(args.lse),
                                 &scale,
                                 &one,
                                 args.d_q,
                                 args.d_k,
                                 args.d_v,
                                 space,
                                 space + accumulator};
  if (shape.causal) {
    uids.push_back(kNegativeInfinity);
    pointers.push_back(&negative_infinity);
  }
  cudnn::execute(handle_, p, uids, pointers, space + accumulator + sums, "cuDNN attention backward");
}

}  // namespace weft::cuda
