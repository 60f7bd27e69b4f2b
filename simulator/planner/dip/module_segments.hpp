#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/planner/dip/layer_costs.hpp"

namespace weft::dip {

// How PipeWeaver's modality-aware partitioner (papers/001 §5) cuts one transformer module of a
// multimodal model: into `segments` pipeline segments of pp model chunks each, a microbatch's
// items (its images, for a module of image tokens) into sub-microbatches of `sub_microbatch`.
// Projectors ride with the layer they are anchored to.
struct ModuleSegments {
  std::size_t module = 0;  // index in the model spec
  int first_layer = 0;     // its pipeline layers: [first_layer, first_layer + layers)
  int layers = 0;
  int sub_microbatch = 0;  // items per sub-microbatch; 0: a microbatch is one sub-microbatch
  int segments = 1;
  std::vector<int> chunk_layers;  // per model chunk; segment k's chunk on rank p is k * pp + p
  bool backward = true;           // under the frozen rule its layers have backward passes
  double latency_s = 0.0;         // T_i: one sub-microbatch's forward and backward, what K_i is set by

  int chunk_first_layer(int chunk) const;
};

// A module's items in a microbatch of `shape`: its images for a module of image tokens, else one
// when the microbatch gives it tokens, zero when it gives none.
std::int64_t module_items(const ModuleSpec& module, const SampleShape& shape);

// What a sub-microbatch of `items` of a microbatch of `shape` holds, as `module` sees it: only
// what sets the module's tokens, so that sub-microbatches alike share cached costs.
SampleShape sub_microbatch_shape(const ModuleSpec& module, const SampleShape& shape, std::int64_t items);

struct SegmentOptions {
  int pp = 1;
  // Items per sub-microbatch of every split module; 0: each by the 95% efficiency rule.
  int sub_microbatch = 0;
  // The largest sub-microbatch tried by the efficiency rule (the paper's sequences hold at most 48).
  int max_sub_microbatch = 48;
};

// The partition of every transformer module for a batch of microbatch `shapes`:
//  - B_i, for a module of image tokens: the smallest size whose efficiency (model FLOPs per second
//    of its layers) is within 95% of the best over 1..max_sub_microbatch;
//  - T_i: a sub-microbatch of B_i items' forward and backward time, or for a module that is not
//    split, the mean of its microbatches' (those that give it tokens);
//  - K_i = floor(T_i / T_1), at most layers / pp; chunks of L_i / (pp K_i) layers.
// InputError when a module has fewer layers than pp or no microbatch gives any module tokens.
std::vector<ModuleSegments> plan_module_segments(LayerCosts& costs, std::span<const SampleShape> shapes,
                                                 const SegmentOptions& options);

}  // namespace weft::dip
