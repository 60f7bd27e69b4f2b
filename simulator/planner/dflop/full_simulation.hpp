#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "simulator/planner/dflop/dflop_timeline.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::dflop {

// A layout weft dflop times on its stage model, run op by op instead: weft's training simulation
// of the layout, each component on a mesh of its own (parallel.modules, module_meshes.hpp), on
// uniform samples of the dataset's mean shape (its mean images, rounded; its mean LLM tokens,
// padded), as many an iteration as the layout's buckets hold at the fullest bucket's count. The
// stage model times the same samples, so that the two implementations can be compared layout by
// layout; the data's spread, which only the stage model's runs see, is left out of both.
struct FullSimulation {
  std::string layout;
  DflopPlan plan;
  SampleShape sample;        // every sample's shape
  std::int64_t samples = 0;  // an iteration's
  double stage_model_s = 0.0;
  std::optional<double> iteration_s;  // the full simulation's; none where it is refused
  double samples_per_s = 0.0;
  bool out_of_memory = false;
  std::string refused;  // why the full simulation does not run the layout
};

// `base` gives the model, cluster, stack, recomputation and options; `stages` each component's
// layers per stage; `global_batch` the samples the buckets must hold.
FullSimulation simulate_layout(const TrainingScenario& base, ModelCosts& costs, std::string layout,
                               const DflopPlan& plan, const StageLayers& stages, const DatasetProfile& data,
                               std::int64_t global_batch, std::int64_t pad_to);

}  // namespace weft::dflop
