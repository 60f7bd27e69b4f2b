#pragma once

#include <memory>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/graph/graph.hpp"
#include "simulator/plan/execution_plan.hpp"

namespace weft {

// An execution plan as a graph the engine times: what weft live would run, simulated.
struct PlanGraph {
  Graph graph;
  std::unique_ptr<ClusterCostModel> cost_model;
};

// One simulated rank per program (its TP, CP and DP peers do the same work), on a device named as
// the program's first rank is in traces ("stage 1 / tp 0 / dp 0"), with a stream per stream its
// ops name. Ops go in issue order, as the live executor issues them: an op waits for the
// synchronous op issued before it (a synchronous one also follows the op before it on its
// stream), and for the asynchronous ops in its `after`. A transfer is a send on a link from its
// sender to its receiver (the pair's bandwidth and latency; one message where a sender of fewer TP
// ranks sends a copy to each of several, and the slot's 2S between the two stages' first ranks for
// DFLOP's communicator, as weft simulate times them), issued at its isend; the first op or
// send issued after a wait_irecv or wait_isend waits for it. Collectives are costed for their
// communicator on `cluster` (plan_group_members); those of the embedding group join the n-th such
// op of each stage that has them. InputError for a transfer without both sides.
PlanGraph plan_graph(const ExecutionPlan& plan, const ClusterSpec& cluster);

}  // namespace weft
