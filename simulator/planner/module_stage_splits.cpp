#include "simulator/planner/module_stage_splits.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/workload/modality_stages.hpp"

namespace weft {

std::vector<std::vector<int>> module_stage_splits(const MultimodalSpec& model, int pp) {
  std::vector<std::vector<int>> splits;
  std::vector<int> counts(model.modules.size(), 0);
  // Stages the transformer modules from `m` on need at least (one each) and take at most.
  std::vector<int> least(model.modules.size() + 1, 0);
  std::vector<std::int64_t> most(model.modules.size() + 1, 0);
  for (std::size_t m = model.modules.size(); m-- > 0;) {
    const int layers = model.modules[m].layers();
    least[m] = least[m + 1] + (layers > 0 ? 1 : 0);
    most[m] = most[m + 1] + layers;
  }
  // Depth-first over the modules, `left` stages still to give.
  auto give = [&](auto& self, std::size_t m, int left) -> void {
    if (m == model.modules.size()) {
      if (left == 0) splits.push_back(counts);
      return;
    }
    const int layers = model.modules[m].layers();
    if (layers == 0) {  // a projector runs on the stage of the module it reads
      counts[m] = 0;
      self(self, m + 1, left);
      return;
    }
    for (int stages = 1; stages <= std::min(layers, left - least[m + 1]); ++stages) {
      if (left - stages > most[m + 1]) continue;  // the later modules cannot take the rest
      counts[m] = stages;
      self(self, m + 1, left - stages);
    }
  };
  give(give, 0, pp);
  return splits;
}

std::int64_t busiest_stage_weight(std::span<const std::int64_t> layer_weights, const MultimodalSpec& model,
                                  std::span<const int> module_stages) {
  const std::vector<int> stage_layers = partition_within_modules(layer_weights, model, module_stages);
  std::int64_t busiest = 0;
  std::size_t first = 0;
  for (int layers : stage_layers) {
    const auto end = first + static_cast<std::size_t>(layers);
    busiest =
        std::max(busiest, std::accumulate(layer_weights.begin() + static_cast<std::ptrdiff_t>(first),
                                          layer_weights.begin() + static_cast<std::ptrdiff_t>(end), std::int64_t{0}));
    first = end;
  }
  return busiest;
}

const std::vector<int>& most_balanced_split(std::span<const std::vector<int>> splits,
                                            std::span<const std::int64_t> layer_weights, const MultimodalSpec& model) {
  std::size_t best = 0;
  std::int64_t best_weight = busiest_stage_weight(layer_weights, model, splits.front());
  for (std::size_t i = 1; i < splits.size(); ++i) {
    const std::int64_t weight = busiest_stage_weight(layer_weights, model, splits[i]);
    if (weight < best_weight) best = i, best_weight = weight;
  }
  return splits[best];
}

}  // namespace weft
