#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/workload/multimodal_model.hpp"

namespace weft {

// The parameters each pipeline layer brings to its stage: its own and those of the blocks
// anchored to it (embeddings, heads, projectors; multimodal_model.hpp).
std::vector<std::int64_t> pipeline_layer_parameters(const MultimodalModel& model);

// The compute time (ns) each pipeline layer costs one microbatch of `sample`s on one rank, with
// the blocks anchored to it: forward, input and weight gradients as the frozen rule leaves them,
// communication aside. What Cornstarch balances (papers/004 §4.2): one forward and one backward.
// On `gpu`, a GPU type of the cluster; by default, the cluster's own.
std::vector<std::int64_t> pipeline_layer_times(const MultimodalModel& model, const ShardContext& base,
                                               const SampleShape& sample, const ClusterCostModel& cost,
                                               const DeviceSpec* gpu = nullptr);

// Layers per virtual stage, contiguous and at least one each, such that the heaviest stage (by
// the layers' weights: parameters for Megatron's balanced partitioning of concatenated modules,
// or times) is as light as possible. With `speeds` (one per group, in (0, 1]: stragglers), a
// group's load counts as its weight over its speed, so slower groups get fewer layers. Needs
// 1 <= groups <= layers.
std::vector<int> partition_balanced(std::span<const std::int64_t> layer_weights, int groups,
                                    std::span<const double> speeds = {});

}  // namespace weft
