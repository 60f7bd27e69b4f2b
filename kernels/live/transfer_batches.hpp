#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "simulator/plan/execution_plan.hpp"

namespace weft {

// The runs of consecutive transfer launches (isend, irecv) in a program's actions, each as
// [first, last) action indices, in program order: `weft live` starts each run as one group, as
// Megatron's batched P2P starts a pipeline step's sends and receives (NCCL: one ncclGroupStart /
// ncclGroupEnd, so that two ranks that send before they receive cannot deadlock).
std::vector<std::pair<std::size_t, std::size_t>> transfer_batches(const std::vector<PlanAction>& actions);

}  // namespace weft
