#include "simulator/workload/training_workload.hpp"

#include "simulator/workload/graph_size.hpp"
#include "simulator/workload/training_graph_builder.hpp"

namespace weft {

StaticMemory rank_static_memory(const TrainingScenario& scenario, std::int64_t parameters, std::int64_t trained,
                                int position) {
  const ParallelPlan& p = scenario.parallel;
  const std::int64_t optimizer_shards = p.zero_shards_at(position);
  // ZeRO-2 keeps only its shard of the reduced gradients (each bucket is reduce-scattered as the
  // backward pass produces it, so only the shard outlives it).
  const std::int64_t gradient_shards = p.zero >= 2 ? optimizer_shards : 1;
  StaticMemory memory;
  // ZeRO-3 keeps only its shard of the parameters; a gathered layer is a transient buffer.
  memory.parameters =
      scenario.stack.parameter_bytes(scenario.training.dtype) * parameters / (p.zero >= 3 ? optimizer_shards : 1);
  memory.gradients = scenario.stack.gradient_memory_bytes(scenario.training.dtype) * trained / gradient_shards;
  memory.optimizer_states = scenario.stack.optimizer_state_bytes(scenario.training.dtype) * trained / optimizer_shards;
  memory.framework_overhead = scenario.options.framework_overhead;
  return memory;
}

TrainingWorkload build_training_workload(const TrainingScenario& scenario, const WorkloadOptions& options) {
  check_training_graph_size(scenario, options);
  return training_graph::TrainingGraphBuilder(scenario, options).build();
}

}  // namespace weft
