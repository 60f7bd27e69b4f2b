#pragma once

#include <cstdint>
#include <span>

#include "kernels/backend.hpp"
#include "kernels/operand_pool.hpp"
#include "simulator/core/op_work.hpp"

namespace weft {

enum class KernelKind : std::uint8_t { none, gemm, attention_forward, attention_backward, memory_bound };

// The layout of a simulator GEMM's kernel (Kernel::nn, nt, tn; any other, nn), and back.
GemmLayout gemm_layout_of(Kernel kernel);
Kernel kernel_of(GemmLayout layout);

// The attention of a shape {batch, heads, queries, keys, head_dim, causal[, kv_heads]} (an op's or a
// measurement's); throws InputError for another number of dimensions.
AttentionShape attention_shape_of(std::span<const std::int64_t> shape, Dtype dtype);

// The kernel call that executes one compute op.
struct KernelOp {
  KernelKind kind = KernelKind::none;
  GemmShape gemm;
  AttentionShape attention;
  MemoryBoundShape memory;

  // Operand bytes the call reads (each operand at its own offset) and writes.
  std::int64_t read_bytes() const;
  std::int64_t write_bytes() const;
};

// The kernel for a compute op of the simulator (OpWork): gemm {m, n, k} in the layout of its kernel; attention_fwd and
// attention_bwd {batch, heads, queries per sample, keys per sample, head_dim, causal}; the
// memory-bound classes (elementwise, norm, embedding, loss, optimizer, memcpy) as the
// memory-bound kernel writing the elements of the op's shape and reading the rest of its bytes;
// ops that move no bytes (barriers) as none. Throws InputError for a shape it cannot read.
KernelOp kernel_op_for(const OpWork& work);

// Runs `op` with operands from `pool` (reserved for it).
void run_kernel(Backend& backend, OperandPool& pool, const KernelOp& op);

}  // namespace weft
