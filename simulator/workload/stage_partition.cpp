#include "simulator/workload/stage_partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace weft {
namespace {

// Greedy layers per group under `cap` (times the group's speed, where speeds are given),
// leaving at least one layer for every later group; empty if `groups` groups cannot hold every
// layer under it.
std::vector<int> pack(std::span<const std::int64_t> weights, int groups, std::int64_t cap,
                      std::span<const double> speeds) {
  auto cap_of = [&](std::size_t group) {
    return speeds.empty() ? cap : static_cast<std::int64_t>(static_cast<double>(cap) * speeds[group]);
  };
  std::vector<int> layers;
  std::int64_t load = 0;
  int in_group = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const auto remaining = static_cast<std::int64_t>(weights.size() - i);
    const auto groups_after = static_cast<std::int64_t>(groups) - static_cast<std::int64_t>(layers.size()) - 1;
    const bool must_close = remaining == groups_after;  // one layer for each group still to fill
    if (in_group > 0 && (load + weights[i] > cap_of(layers.size()) || must_close)) {
      layers.push_back(in_group);
      load = 0;
      in_group = 0;
    }
    if (static_cast<int>(layers.size()) >= groups || weights[i] > cap_of(layers.size())) return {};
    load += weights[i];
    ++in_group;
  }
  layers.push_back(in_group);
  if (static_cast<int>(layers.size()) != groups) return {};
  return layers;
}

// `weigh` of each pipeline layer's steps, with the blocks anchored to it.
template <class Weigh>
std::vector<std::int64_t> per_layer(const MultimodalModel& model, const ShardContext& base, const SampleShape& sample,
                                    Weigh&& weigh) {
  const int layers = model.layer_count();
  std::vector<std::int64_t> weights;
  for (int layer = 0; layer < layers; ++layer) {
    std::vector<Step> steps;
    std::vector<int> blocks;
    model.append_steps(base, sample, {layer, layer + 1, layer == 0, layer + 1 == layers}, false, steps, blocks);
    weights.push_back(weigh(std::span<const Step>(steps)));
  }
  return weights;
}

}  // namespace

std::vector<std::int64_t> pipeline_layer_parameters(const MultimodalModel& model) {
  return per_layer(model, ShardContext{}, kOneOfEach, parameters_of);
}

std::vector<std::int64_t> pipeline_layer_times(const MultimodalModel& model, const ShardContext& base,
                                               const SampleShape& sample, const ClusterCostModel& cost,
                                               const DeviceSpec* on) {
  const DeviceSpec& gpu = on != nullptr ? *on : cost.cluster().gpu;
  auto time = [&](const std::optional<OpWork>& work) {
    const bool computes = work && category_of(work->op_class) != OpCategory::communication;
    return computes ? cost.duration(*work, gpu) : TimeNs{0};
  };
  return per_layer(model, base, sample, [&](std::span<const Step> steps) {
    std::int64_t total = 0;
    for (const Step& step : steps) total += time(step.forward) + time(step.backward) + time(step.weight_grad);
    return total;
  });
}

std::vector<int> partition_balanced(std::span<const std::int64_t> layer_weights, int groups,
                                    std::span<const double> speeds) {
  // The smallest cap under which the layers pack into the groups; packing is monotone in it.
  // A group of speed s holds s x cap: the slowest group gets the whole model under
  // total / slowest.
  const double slowest = speeds.empty() ? 1.0 : *std::min_element(speeds.begin(), speeds.end());
  std::int64_t low = *std::max_element(layer_weights.begin(), layer_weights.end());
  std::int64_t high =
      static_cast<std::int64_t>(
          std::ceil(static_cast<double>(std::accumulate(layer_weights.begin(), layer_weights.end(), std::int64_t{0})) /
                    slowest)) +
      1;
  while (low < high) {
    const std::int64_t mid = low + (high - low) / 2;
    if (pack(layer_weights, groups, mid, speeds).empty()) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return pack(layer_weights, groups, low, speeds);
}

}  // namespace weft
