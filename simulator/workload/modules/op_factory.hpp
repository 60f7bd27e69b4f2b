#pragma once

#include <cstdint>

#include "simulator/core/op_work.hpp"

namespace weft {

// C[m, n] = A[m, k] B[k, n]: 2mnk FLOPs, each matrix read or written once; `layout` says how the
// operands are stored (Kernel::nn, nt, tn), when known.
OpWork gemm_work(std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype, Kernel layout = Kernel::any);

// A memory-bound op (norm, elementwise, loss, optimizer) over `memory_bytes` of traffic.
OpWork memory_bound_work(OpClass op_class, Bytes memory_bytes, double flops, Dtype dtype, WorkShape shape = {});

// One Adam step over `parameters` parameters as a fused multi-tensor kernel runs it: 10 FLOPs and
// 28 bytes of traffic per parameter (mixed precision reads the bf16 gradient and the fp32 master
// weight and moments, then writes those three and the bf16 weight; with fp32 gradients and no bf16
// copy, as PyTorch's fused AdamW over fp32 parameters, the total is the same).
OpWork adam_step_work(std::int64_t parameters);

// A collective or point-to-point transfer of `bytes` (nccl-tests conventions, see
// CollectiveModel). The communicator is attached when the op is placed.
OpWork communication_work(OpClass op_class, Bytes bytes);

}  // namespace weft
