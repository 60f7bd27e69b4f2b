#include "simulator/workload/training_workload.hpp"

#include "simulator/workload/training_graph_builder.hpp"

namespace weft {

StaticMemory rank_static_memory(const TrainingScenario& scenario, std::int64_t parameters, std::int64_t trained) {
  const ParallelPlan& p = scenario.parallel;
  const std::int64_t optimizer_shards = p.zero == 1 ? std::int64_t{p.dp} * p.cp : 1;
  StaticMemory memory;
  memory.parameters = 2 * parameters;
  memory.gradients = 2 * trained;
  memory.optimizer_states = training_graph::kOptimizerStateBytes * trained / optimizer_shards;
  memory.framework_overhead = scenario.options.framework_overhead;
  return memory;
}

TrainingWorkload build_training_workload(const TrainingScenario& scenario, const WorkloadOptions& options) {
  return training_graph::TrainingGraphBuilder(scenario, options).build();
}

}  // namespace weft
