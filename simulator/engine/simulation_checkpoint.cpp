#include "simulator/engine/simulation_checkpoint.hpp"

namespace weft {

SimulationCheckpoint::SimulationCheckpoint(Graph graph, const CostModel& cost_model, SimulationOptions options)
    : graph_(std::move(graph)), cost_model_(cost_model), options_(std::move(options)) {
  if (options_.cache == nullptr) {
    own_cache_ = std::make_unique<ScheduleCache>();
    options_.cache = own_cache_.get();
  }
  result_ = simulate(graph_, cost_model_, options_);
}

SimulationCheckpoint::Resumed SimulationCheckpoint::resume(const StreamOrder& order,
                                                           std::span<const std::pair<OpId, OpId>> edges) const {
  Resumed resumed{reissue(graph_, order, edges), {}};
  resumed.result = simulate(resumed.reissued.graph, cost_model_, options_);
  return resumed;
}

}  // namespace weft
