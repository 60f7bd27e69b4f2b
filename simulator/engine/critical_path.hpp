#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// Follows op_binding back from the op that ends last (lowest id on ties): the chain of ops,
// first to last, in which each starts when the previous ends and the last sets the makespan.
std::vector<OpId> find_critical_path(const SimulationResult& result);

struct CriticalPathSummary {
  TimeNs length = 0;
  std::array<TimeNs, kOpCategoryCount> by_category{};
  std::vector<TimeNs> by_device;  // indexed by device id
  std::vector<OpId> longest_ops;  // the path's longest ops, longest first (ties by id)
};

CriticalPathSummary summarize_critical_path(const Graph& graph, const SimulationResult& result,
                                            std::size_t longest_count);

}  // namespace weft
