#pragma once

#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/flatten.hpp"

namespace weft {

// The result of simulating `flat` (the expansion of `graph`) told in terms of `graph`: a
// composite starts with the first op of its expansion and ends with the last, and its schedule
// gives the times of the ops inside.
SimulationResult fold_flat_result(const Graph& graph, const FlatGraph& flat, SimulationResult flat_result);

}  // namespace weft
