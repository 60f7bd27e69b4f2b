#include "simulator/workload/training_workload.hpp"

#include "simulator/workload/training_graph_builder.hpp"

namespace weft {

TrainingWorkload build_training_workload(const TrainingScenario& scenario, const WorkloadOptions& options) {
  return training_graph::TrainingGraphBuilder(scenario, options).build();
}

}  // namespace weft
