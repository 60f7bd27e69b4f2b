#pragma once

#include "cost_models/cost_model.hpp"
#include "simulator/engine/simulation_result.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

struct SimulationOptions {
  // Keep every change of each device's live memory (for traces); the peak is always computed.
  bool record_memory_timeline = false;
};

// Discrete-event simulation of one graph. Ops start as soon as every dependency has finished and
// their stream lets them: an in_order stream runs its ops in issue order, a first_ready stream
// runs whichever waiting op became ready first (ties by op id). A collective's members start
// together when the last of them is ready. Time is integer nanoseconds and every tie is broken
// by op id, so the result depends on nothing but the inputs.
SimulationResult simulate(const Graph& graph, const CostModel& cost_model, const SimulationOptions& options = {});

}  // namespace weft
