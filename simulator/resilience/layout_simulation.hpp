#pragma once

#include <cstdint>
#include <vector>

#include "simulator/workload/training_scenario.hpp"

namespace weft {

// One iteration of `base` re-laid out as `dp` pipelines of `pp` stages (the scenario's TP and CP,
// 1F1B, layers split evenly or as `stage_layers` says, no interleaving), each taking
// `microbatches` microbatches, on just the GPUs that takes: the time, and whether it fits in
// memory. Throws InvalidPlan for a layout the model or batch refuses.
struct LayoutRun {
  double iteration_s = 0.0;
  bool oom = false;
  std::int64_t parameters = 0;
};

LayoutRun simulate_layout(const TrainingScenario& base, int pp, int dp, std::int64_t microbatches,
                          const std::vector<int>& stage_layers = {});

}  // namespace weft
