#pragma once

#include <span>
#include <vector>

namespace weft::entrain {

// A module's layers cut into consecutive pipeline stages.
struct LayerPartition {
  std::vector<int> layers;         // per stage
  std::vector<double> stage_cost;  // per stage: its layers' costs summed (tau_{i,p})
  double bottleneck = 0.0;         // the largest (beta_i)
};

// Intra-module balancing (papers/002 §4.4.3, Eq. 4.1): the split of `layer_costs` into `stages`
// consecutive non-empty stages whose costliest stage costs least, by the dynamic program
// F(l, p) = min over l' < l of max(F(l', p - 1), cost of layers l'+1..l); among equal splits, the
// one whose first stages end earliest. Needs 1 <= stages <= layers.
LayerPartition min_max_partition(std::span<const double> layer_costs, int stages);

// The analytical iteration time of Eq. 4.2: every stage's time once (the pipeline's fill and
// drain) plus (K - 1) times the slowest stage's.
double analytical_iteration(std::span<const LayerPartition> modules, int microbatches);

}  // namespace weft::entrain
