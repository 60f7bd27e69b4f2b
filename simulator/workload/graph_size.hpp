#pragma once

// The size of a training iteration's graph, estimated from the scenario before any of it is built,
// and the limit that refuses a graph this machine cannot hold (a global batch of 2^31 samples
// would otherwise allocate until the memory runs out).

#include <cstdint>

#include "simulator/core/units.hpp"
#include "simulator/graph/graph_size_limit.hpp"
#include "simulator/workload/pipeline_layer_steps.hpp"
#include "simulator/workload/training_scenario.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft {

struct GraphSize {
  std::int64_t simulated_ranks = 0;
  std::int64_t microbatches = 0;        // per simulated rank
  std::int64_t ops_per_microbatch = 0;  // on the busiest rank, composites flattened
  std::int64_t ops = 0;                 // every op, composites flattened (what the engine simulates)
  std::int64_t held_ops = 0;            // ops the graph holds: with composites, theirs and their templates'
  Bytes bytes = 0;                      // memory of the ops held
};

// Saturates rather than overflows: a scenario of 2^60 ops estimates INT64_MAX. `layer_steps`, if
// given, are the scenario's own (pipeline_layer_steps without a shared head), computed once for
// many plans.
GraphSize estimate_training_graph(const TrainingScenario& scenario, const WorkloadOptions& options,
                                  const PipelineLayerSteps* layer_steps = nullptr);

// Throws InputError when the graph would hold more than options.max_ops (graph_op_limit) ops; the
// message names the scenario's field behind the size, the estimate and the limit.
void check_training_graph_size(const TrainingScenario& scenario, const WorkloadOptions& options);

}  // namespace weft
