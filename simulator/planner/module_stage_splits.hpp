#pragma once

// How a sweep gives the transformer modules of a multimodal model pipeline stages of their own
// (modality parallelism, modality_stages.hpp): which splits of a plan's stages over the modules
// exist, and which of them balances the stages best.

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/workload/multimodal_spec.hpp"

namespace weft {

// Every split of `pp` stages over the modules of `model`: per module its stage count, 0 for a
// projector, at least 1 and at most its layers for a transformer module. In lexicographic order
// of the counts (the first modules' fewest first); empty when none exists.
std::vector<std::vector<int>> module_stage_splits(const MultimodalSpec& model, int pp);

// The busiest stage's weight when each module's layers are dealt over its stages
// (partition_within_modules), `layer_weights` one per pipeline layer.
std::int64_t busiest_stage_weight(std::span<const std::int64_t> layer_weights, const MultimodalSpec& model,
                                  std::span<const int> module_stages);

// Of `splits` (not empty), the one whose busiest stage weighs least; the first on ties.
const std::vector<int>& most_balanced_split(std::span<const std::vector<int>> splits,
                                            std::span<const std::int64_t> layer_weights, const MultimodalSpec& model);

}  // namespace weft
