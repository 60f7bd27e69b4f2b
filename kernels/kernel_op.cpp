#include "kernels/kernel_op.hpp"

#include <cmath>
#include <string>

#include "cost_models/calibrated_cost_model.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

std::string describe(const OpWork& work) {
  std::string shape;
  for (std::int64_t x : work.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(x);
  return std::string(kOpClassNames.name(work.op_class)) + " [" + shape + "]";
}

void expect_dims(const OpWork& work, std::size_t dims) {
  if (work.shape.size() != dims) {
    throw InputError(describe(work) + ": expected a shape of " + std::to_string(dims) + " dimensions");
  }
}

KernelOp memory_bound_op(const OpWork& work) {
  const std::int64_t element = bytes_per_element(work.dtype);
  const std::int64_t total = work.memory_bytes / element;
  std::int64_t outputs = 1;
  for (std::int64_t x : work.shape) outputs *= x;
  // Without a shape, or one larger than the op's traffic, half the traffic is written.
  if (work.shape.empty() || outputs <= 0 || outputs > total) outputs = std::max<std::int64_t>(1, total / 2);
  KernelOp op;
  op.kind = KernelKind::memory_bound;
  op.memory.outputs = outputs;
  op.memory.inputs = std::max<std::int64_t>(0, total - outputs);
  op.memory.flops_per_output = static_cast<int>(std::lround(work.flops / static_cast<double>(outputs)));
  op.memory.dtype = work.dtype;
  return op;
}

}  // namespace

AttentionShape attention_shape_of(std::span<const std::int64_t> shape, Dtype dtype) {
  if (shape.size() != 6 && shape.size() != 7) {
    throw InputError(
        "attention: expected a shape of 6 or 7 dimensions (batch, heads, queries, keys, head_dim, causal, "
        "kv_heads), got " +
        std::to_string(shape.size()));
  }
  AttentionShape attention{shape[0], shape[1], shape[2], shape[3], shape[4], shape[5] != 0, dtype};
  if (shape.size() == 7) attention.kv_heads = shape[6];
  check_shape(attention);
  return attention;
}

GemmLayout gemm_layout_of(Kernel kernel) {
  switch (kernel) {
    case Kernel::nt:
      return GemmLayout::nt;
    case Kernel::tn:
      return GemmLayout::tn;
    default:
      return GemmLayout::nn;
  }
}

Kernel kernel_of(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::nt:
      return Kernel::nt;
    case GemmLayout::tn:
      return Kernel::tn;
    case GemmLayout::nn:
      break;
  }
  return Kernel::nn;
}

std::int64_t KernelOp::read_bytes() const {
  switch (kind) {
    case KernelKind::gemm:
      return gemm.a_bytes() + gemm.b_bytes();
    case KernelKind::attention_forward:
      return attention.query_bytes() + 2 * attention.key_bytes();
    case KernelKind::attention_backward:
      return 3 * attention.query_bytes() + 2 * attention.key_bytes() + attention.lse_bytes();
    case KernelKind::memory_bound:
      return memory.input_bytes();
    case KernelKind::none:
      break;
  }
  return 0;
}

std::int64_t KernelOp::write_bytes() const {
  switch (kind) {
    case KernelKind::gemm:
      return gemm.c_bytes();
    case KernelKind::attention_forward:
      return attention.query_bytes() + attention.lse_bytes();
    case KernelKind::attention_backward:
      return attention.query_bytes() + 2 * attention.key_bytes();
    case KernelKind::memory_bound:
      return memory.output_bytes();
    case KernelKind::none:
      break;
  }
  return 0;
}

KernelOp kernel_op_for(const OpWork& work) {
  KernelOp op;
  switch (work.op_class) {
    case OpClass::gemm:
      expect_dims(work, 3);
      op.kind = KernelKind::gemm;
      op.gemm = {work.shape[0], work.shape[1], work.shape[2], work.dtype, gemm_layout_of(work.kernel)};
      check_shape(op.gemm);
      return op;
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
      op.kind =
          work.op_class == OpClass::attention_fwd ? KernelKind::attention_forward : KernelKind::attention_backward;
      try {
        op.attention = attention_shape_of(work.dims(), work.dtype);
      } catch (const InputError& error) {
        throw InputError(describe(work) + ": " + error.what());
      }
      return op;
    case OpClass::barrier:
    case OpClass::host:
      return op;
    default:
      if (!is_memory_bound_class(work.op_class) && work.op_class != OpClass::other) {
        throw InputError(describe(work) + ": not a compute op");
      }
      if (work.memory_bytes <= 0) return op;
      return memory_bound_op(work);
  }
}

void run_kernel(Backend& backend, OperandPool& pool, const KernelOp& op) {
  const auto [in, out] = pool.take(op.read_bytes(), op.write_bytes());
  switch (op.kind) {
    case KernelKind::gemm:
      return backend.gemm(op.gemm, in, in + op.gemm.a_bytes(), out);
    case KernelKind::attention_forward: {
      const std::int64_t q = op.attention.query_bytes();
      const std::int64_t k = op.attention.key_bytes();
      return backend.attention_forward(op.attention, {in, in + q, in + q + k, out, out + q});
    }
    case KernelKind::attention_backward: {
      const std::int64_t q = op.attention.query_bytes();
      const std::int64_t k = op.attention.key_bytes();
      // Reads Q, K, V, O, dO and the log-sum-exp; writes dQ, dK, dV.
      return backend.attention_backward(op.attention, {in, in + q, in + q + k, in + q + 2 * k, in + 3 * q + 2 * k,
                                                       in + 2 * q + 2 * k, out, out + q, out + q + k});
    }
    case KernelKind::memory_bound:
      return backend.memory_bound(op.memory, in, out);
    case KernelKind::none:
      return;
  }
}

}  // namespace weft
