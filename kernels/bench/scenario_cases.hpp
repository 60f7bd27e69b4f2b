#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost_models/cluster_cost_model.hpp"
#include "kernels/bench/bench_suite.hpp"
#include "simulator/graph/graph.hpp"

namespace weft {

// The cases that time exactly the ops of one simulated training iteration (weft bench
// --scenario), and the communicator placements among them that the job cannot form.
struct ScenarioCases {
  std::vector<BenchCase> cases;
  std::vector<std::pair<int, int>> unplaced;  // (group size, ranks per node), each once
};

// One case per distinct op of `graph` whose part `suite.parts` names, labelled with the first op
// that runs it: GEMMs in their layouts, off the grid (calibration fits each as a point of its
// own); attention forward and backward; memory-bound ops as the memory-bound kernel moving the
// same bytes (kernel_op_for); collectives and sends over their communicators' placements (from
// `cost`) where a job of `suite.ranks`, `suite.ranks_per_node` to a node, can form them; a send's
// receive is its ping-pong's other half. Split fit, in the order the graph holds them.
ScenarioCases scenario_bench_cases(const Graph& graph, const ClusterCostModel& cost, const SuiteOptions& suite);

}  // namespace weft
