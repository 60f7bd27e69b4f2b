#include "simulator/resilience/morphing_planner.hpp"

#include <string>

#include "simulator/resilience/layout_simulation.hpp"

namespace weft {

MorphingPlanner::MorphingPlanner(const TrainingScenario& scenario, int nodes) : scenario_(scenario) {
  if (scenario.model.multimodal() || scenario.data) {
    throw InputError("varuna: morphs models of one module on uniform batches only");
  }
  for (int n = 1; n <= nodes && min_nodes_ == 0; ++n) {
    if (best(n)) min_nodes_ = n;
  }
  if (min_nodes_ == 0) throw InputError("varuna: no layout of the job's nodes holds the model in memory");
}

std::optional<double> MorphingPlanner::iteration_s(int pp, int dp) {
  const auto key = std::make_pair(pp, dp);
  if (auto found = layouts_.find(key); found != layouts_.end()) return found->second;
  std::optional<double> out;
  const std::int64_t per_replica = scenario_.training.micro_batch * dp;
  if (scenario_.training.global_batch % per_replica == 0) {
    try {
      const LayoutRun run = simulate_layout(scenario_, pp, dp, scenario_.training.global_batch / per_replica);
      if (!run.oom) out = run.iteration_s;
    } catch (const InvalidPlan&) {
      // A layout the model refuses (TP x CP across nodes, too many stages): not one to morph to.
    }
  }
  return layouts_.emplace(key, out).first->second;
}

const std::optional<MorphedLayout>& MorphingPlanner::best(int nodes) {
  if (auto found = best_.find(nodes); found != best_.end()) return found->second;
  std::optional<MorphedLayout> best;
  const int replicas = nodes * scenario_.cluster.gpus_per_node / (scenario_.parallel.tp * scenario_.parallel.cp);
  // Every layout the nodes hold, so that more nodes are never slower.
  for (int pp = 1; pp <= std::min(replicas, scenario_.model.layers()); ++pp) {
    for (int dp = 1; dp <= replicas / pp; ++dp) {
      const auto time = iteration_s(pp, dp);
      if (time && (!best || *time < best->iteration_s)) best = MorphedLayout{pp, dp, *time};
    }
  }
  return best_.emplace(nodes, best).first->second;
}

}  // namespace weft
