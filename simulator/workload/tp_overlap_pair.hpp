#pragma once

// Which two consecutive forward steps of a transformer layer TP communication overlap runs as one
// pair (Transformer Engine's userbuffers, training_tp_overlap.cpp): the graph builder emits the
// pair's ops, the planner's stage model prices the same pair in closed form (dip/layer_costs.cpp).

#include <cstdint>

#include "simulator/workload/op_parts.hpp"
#include "simulator/workload/step.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// An all-gather before a GEMM split into TP row parts (a ring exchange), or a GEMM split into
// kTpOverlapPipelineParts row parts before its reduce-scatter (a pipeline).
enum class TpOverlapPair : std::uint8_t { none, gather_then_gemm, gemm_then_scatter };

inline TpOverlapPair tp_overlap_pair(const Step& first, const Step& second, std::int64_t tp) {
  const auto collective = [](const Step& step, OpClass op_class) {
    return step.comm == CommGroupKind::tp && step.forward && step.forward->op_class == op_class;
  };
  const auto gemm_in = [](const Step& step, std::int64_t parts) {
    return step.forward && splits_into_row_parts(*step.forward, parts);
  };
  if (collective(first, OpClass::allgather) && gemm_in(second, tp)) return TpOverlapPair::gather_then_gemm;
  if (gemm_in(first, kTpOverlapPipelineParts) && collective(second, OpClass::reducescatter))
    return TpOverlapPair::gemm_then_scatter;
  return TpOverlapPair::none;
}

}  // namespace weft
