#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/workload/multimodal_model.hpp"

namespace weft {

// The parameters each pipeline layer brings to its stage: its own and those of the blocks
// anchored to it (embeddings, heads, projectors; multimodal_model.hpp).
std::vector<std::int64_t> pipeline_layer_parameters(const MultimodalModel& model);

// Layers per virtual stage, contiguous and at least one each, such that the stage holding the
// most parameters holds as few as possible: Megatron's balanced partitioning of the concatenated
// modules. Needs 1 <= groups <= layers.
std::vector<int> partition_by_parameters(std::span<const std::int64_t> layer_parameters, int groups);

}  // namespace weft
