#pragma once

#include <cstdint>

#include "simulator/core/op_work.hpp"

namespace weft {

// C[m, n] = A[m, k] B[k, n]: 2mnk FLOPs, each matrix read or written once.
OpWork gemm_work(std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype);

// A memory-bound op (norm, elementwise, loss, optimizer) over `memory_bytes` of traffic.
OpWork memory_bound_work(OpClass op_class, Bytes memory_bytes, double flops, Dtype dtype,
                         std::vector<std::int64_t> shape = {});

// A collective or point-to-point transfer of `bytes` (nccl-tests conventions, see
// CollectiveModel). The communicator is attached when the op is placed.
OpWork communication_work(OpClass op_class, Bytes bytes);

}  // namespace weft
