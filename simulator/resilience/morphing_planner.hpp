#pragma once

#include <map>
#include <optional>
#include <utility>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// A layout Varuna's job morphing (Athlur et al., EuroSys 2022) restarts a job in: dp pipelines of
// pp stages (the scenario's TP and CP a stage, 1F1B, layers split evenly) on the nodes it has,
// some GPUs idle when they do not make a whole pipeline.
struct MorphedLayout {
  int pp = 0;
  int dp = 0;
  double iteration_s = 0.0;
};

// The fastest layout that fits in memory on at most so many nodes, by weft's simulation of every
// one (cached), keeping the global batch.
class MorphingPlanner {
 public:
  MorphingPlanner(const TrainingScenario& scenario, int nodes);

  // The fewest nodes any layout fits on.
  int min_nodes() const { return min_nodes_; }
  // The fastest layout on `nodes` nodes; nullopt when none fits. Cached.
  const std::optional<MorphedLayout>& best(int nodes);

 private:
  // One layout's iteration, or nullopt when it does not fit or the batch does not split. Cached.
  std::optional<double> iteration_s(int pp, int dp);

  TrainingScenario scenario_;
  int min_nodes_ = 0;
  std::map<int, std::optional<MorphedLayout>> best_;
  std::map<std::pair<int, int>, std::optional<double>> layouts_;
};

}  // namespace weft
