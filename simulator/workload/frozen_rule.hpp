#pragma once

#include <span>

#include "simulator/workload/step.hpp"

namespace weft {

// What one module's training computes (papers/004 §4.2, papers/002 §3.3.1): a frozen module has
// no weight gradients and keeps nothing that only they read; a step computes its input gradient
// only if a trainable step lies upstream of it (a frozen module before every trainable one does
// no backward work at all).
struct ModuleTraining {
  bool frozen = false;
  bool trainable_upstream = false;  // a trainable module lies upstream (through its inputs)
};

// Applies the rule to `steps`, consecutive steps of one module. `trainable_before`: whether a
// trainable step lies upstream of the first of them.
void apply_frozen_rule(std::span<Step> steps, const ModuleTraining& module, bool trainable_before);

}  // namespace weft
