#pragma once

#include <span>
#include <vector>

#include "simulator/workload/multimodal_spec.hpp"

namespace weft {

// Which virtual pipeline stages hand their activations to which. Megatron's pipelines
// (interleaved ones included) are a chain: virtual stage g reads g - 1. Under modality
// parallelism (papers/004 §4.1) every transformer module has pipeline stages of its own, so the
// stages form a tree: encoder pipelines run side by side, each into the first stage of the
// module that reads it, and the last stage of the last module has the loss.
class StageGraph {
 public:
  // A chain of `groups` virtual stages over `pp` pipeline ranks.
  static StageGraph chain(int groups, int pp);
  // `module_stages`: per module of `model`, its stages (0 for a projector, which runs on the last
  // stage of the module it reads); stages are numbered module by module. The model must have
  // passed check_modality_stages (training_scenario.cpp): every projector directly after the
  // module it reads, every module but the last read by exactly one later module.
  static StageGraph modality(const MultimodalSpec& model, std::span<const int> module_stages);

  int groups() const { return static_cast<int>(inputs_.size()); }
  // The virtual stages whose output `group` reads, in the order its module lists its inputs;
  // empty for a stage that reads the sample's data.
  const std::vector<int>& inputs(int group) const { return inputs_[static_cast<std::size_t>(group)]; }
  // The virtual stage reading `group`'s output; -1 for the last, which has the loss.
  int successor(int group) const { return successor_[static_cast<std::size_t>(group)]; }
  // Where a schedule places the rank of `group` (vpp = 1 under modality parallelism): the stage
  // index on a pipeline of `pp` stages with as many stages after it as on its path to the loss,
  // which is what 1F1B's warm-up counts (Cornstarch's cross-modality 1F1B).
  int schedule_position(int group) const { return position_[static_cast<std::size_t>(group)]; }

 private:
  std::vector<std::vector<int>> inputs_;
  std::vector<int> successor_;
  std::vector<int> position_;
};

}  // namespace weft
