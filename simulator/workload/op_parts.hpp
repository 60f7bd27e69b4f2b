#pragma once

// The parts the graph builder splits some ops into so that communication overlaps them: a GEMM
// into row blocks (TP communication overlap, training_tp_overlap.cpp) and a ring-attention op into
// one part per KV chunk (training_passes.cpp). The sweep's iteration bound prices the same parts.

#include <cstdint>

#include "simulator/core/op_work.hpp"
#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

// Whether `work` is a GEMM whose rows split into `parts` equal blocks.
inline bool splits_into_row_parts(const OpWork& work, std::int64_t parts) {
  return work.op_class == OpClass::gemm && work.shape.size() == 3 && work.shape[0] % parts == 0;
}

// The GEMM of `whole` over 1/parts of its rows (splits_into_row_parts).
inline OpWork gemm_row_part(const OpWork& whole, std::int64_t parts) {
  return gemm_work(whole.shape[0] / parts, whole.shape[1], whole.shape[2], whole.dtype, whole.kernel);
}

// One of `parts` equal shares of a ring-attention op: its FLOPs and memory traffic split, its
// shape kept (each part attends one KV chunk of the same shape).
inline OpWork ring_attention_part(const OpWork& whole, int parts) {
  OpWork part = whole;
  part.flops /= parts;
  part.memory_bytes /= parts;
  return part;
}

}  // namespace weft
