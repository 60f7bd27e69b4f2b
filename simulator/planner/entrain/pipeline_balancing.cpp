#include "simulator/planner/entrain/pipeline_balancing.hpp"

#include <algorithm>
#include <limits>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {

LayerPartition min_max_partition(std::span<const double> layer_costs, int stages) {
  const auto layers = static_cast<int>(layer_costs.size());
  if (stages < 1 || stages > layers)
    throw InputError("entrain: cannot cut " + std::to_string(layers) + " layers into " + std::to_string(stages) +
                     " non-empty stages");
  std::vector<double> prefix(static_cast<std::size_t>(layers) + 1, 0.0);
  for (int l = 0; l < layers; ++l)
    prefix[static_cast<std::size_t>(l) + 1] =
        prefix[static_cast<std::size_t>(l)] + layer_costs[static_cast<std::size_t>(l)];
  auto range = [&](int from, int to) {
    return prefix[static_cast<std::size_t>(to)] - prefix[static_cast<std::size_t>(from)];
  };
  constexpr double kInfinite = std::numeric_limits<double>::infinity();
  // f[p][l]: the best bottleneck of the first l layers in p stages; cut[p][l]: where its last stage starts.
  std::vector<std::vector<double>> f(static_cast<std::size_t>(stages) + 1,
                                     std::vector<double>(static_cast<std::size_t>(layers) + 1, kInfinite));
  std::vector<std::vector<int>> cut(f.size(), std::vector<int>(static_cast<std::size_t>(layers) + 1, 0));
  for (int l = 1; l <= layers; ++l) f[1][static_cast<std::size_t>(l)] = range(0, l);
  for (int p = 2; p <= stages; ++p) {
    for (int l = p; l <= layers; ++l) {
      for (int from = p - 1; from < l; ++from) {
        const double value =
            std::max(f[static_cast<std::size_t>(p) - 1][static_cast<std::size_t>(from)], range(from, l));
        if (value < f[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)]) {
          f[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)] = value;
          cut[static_cast<std::size_t>(p)][static_cast<std::size_t>(l)] = from;
        }
      }
    }
  }
  LayerPartition out;
  out.layers.assign(static_cast<std::size_t>(stages), 0);
  out.stage_cost.assign(static_cast<std::size_t>(stages), 0.0);
  int end = layers;
  for (int p = stages; p >= 1; --p) {
    const int from = p == 1 ? 0 : cut[static_cast<std::size_t>(p)][static_cast<std::size_t>(end)];
    out.layers[static_cast<std::size_t>(p) - 1] = end - from;
    out.stage_cost[static_cast<std::size_t>(p) - 1] = range(from, end);
    end = from;
  }
  out.bottleneck = *std::max_element(out.stage_cost.begin(), out.stage_cost.end());
  return out;
}

double analytical_iteration(std::span<const LayerPartition> modules, int microbatches) {
  double fill = 0.0;
  double slowest = 0.0;
  for (const LayerPartition& module : modules) {
    for (const double cost : module.stage_cost) fill += cost;
    slowest = std::max(slowest, module.bottleneck);
  }
  return fill + static_cast<double>(std::max(microbatches, 1) - 1) * slowest;
}

}  // namespace weft::entrain
