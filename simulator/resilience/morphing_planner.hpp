#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// A layout Varuna's job morphing (Athlur et al., EuroSys 2022) restarts a job in: dp pipelines of
// pp stages (the scenario's TP and CP a stage, 1F1B, layers split evenly) on the nodes it has,
// some GPUs idle when they do not make a whole pipeline. Each pipeline takes global_batch / dp
// samples (integer division) in whole microbatches, so an iteration trains `samples`, up to
// dp − 1 microbatches fewer than the global batch.
struct MorphedLayout {
  int pp = 0;
  int dp = 0;
  std::int64_t samples = 0;
  double iteration_s = 0.0;

  double samples_per_s() const { return static_cast<double>(samples) / iteration_s; }
};

// Varuna's configuration search (its AutoConfig, microsoft/varuna varuna/auto_config.py at
// a2145cc): the pipeline depths that divide the model's layers, each with as many pipelines as the
// GPUs hold (dp = ⌊replicas / pp⌋); the layout of the most samples a second among them, by weft's
// simulation of each (cached). A few simulations a node count, however large the cluster.
class MorphingPlanner {
 public:
  MorphingPlanner(const TrainingScenario& scenario, int nodes);

  // The fewest nodes a layout fits on.
  int min_nodes() const { return min_nodes_; }
  // The fastest layout on `nodes` nodes; nullopt when none fits. Cached.
  const std::optional<MorphedLayout>& best(int nodes);
  // The pipeline depths tried: the divisors of the model's layers.
  const std::vector<int>& depths() const { return depths_; }

 private:
  // Pipelines of `pp` stages a stage's TP x CP GPUs, on `nodes` nodes.
  int replicas(int nodes) const;
  // One layout's run, or nullopt when it does not fit, trains no sample or the model refuses it.
  // Cached.
  const std::optional<MorphedLayout>& layout(int pp, int dp);
  // The fewest pipelines of `pp` stages that fit (memory only shrinks with more of them: ZeRO
  // shards over them, and each takes fewer microbatches), at most `most`; 0 if none does.
  int fewest_pipelines(int pp, int most);

  TrainingScenario scenario_;
  std::vector<int> depths_;
  std::vector<int> fewest_;  // per depth: fewest_pipelines over the job's nodes
  int min_nodes_ = 0;
  std::map<int, std::optional<MorphedLayout>> best_;
  std::map<std::pair<int, int>, std::optional<MorphedLayout>> layouts_;
};

}  // namespace weft
