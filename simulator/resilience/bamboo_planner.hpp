#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "simulator/resilience/layout_simulation.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// Bamboo's layouts (Thorpe et al., NSDI 2023), as Oobleck's evaluation runs it (papers/002 §2.7):
// the scenario's pipelines with redundant computation (parallel.redundant_computation), each stage
// on whole nodes. A stage whose node fails is run by the node before it, which holds its layers:
// costed as that stage's layers merged into the one before it (a first stage's into the last,
// which takes it over, the embedding staying on the first stage left). Bamboo keeps the pipeline
// depth and drops whole pipelines
// when it restarts or rebuilds, each pipeline taking global batch / pipelines samples in whole
// microbatches.
class BambooPlanner {
 public:
  explicit BambooPlanner(const TrainingScenario& scenario);

  int nodes_per_pipeline() const { return pp_ * nodes_per_stage_; }
  int nodes_per_stage() const { return nodes_per_stage_; }
  int pp() const { return pp_; }
  // Samples an iteration of `pipelines` pipelines.
  std::int64_t samples(int pipelines) const;
  // Samples a second of `pipelines` pipelines of which one lost the stages at positions `lost`
  // (none: every stage on its own node); nullopt when the pipelines do not fit in memory or take
  // no sample. Cached.
  std::optional<double> samples_per_s(int pipelines, const std::vector<int>& lost);
  // The per-stage layers of a pipeline that lost the stages `lost`, each merged into the stage
  // before it (the first into the last).
  std::vector<int> merged_layers(const std::vector<int>& lost) const;

 private:
  std::int64_t microbatches(int pipelines) const;
  // `pipelines` pipelines of `stage_layers`, each taking `microbatches` microbatches. Cached.
  const std::optional<LayoutRun>& simulated(int pipelines, std::int64_t microbatches,
                                            const std::vector<int>& stage_layers);
  // The iteration of `pipelines` pipelines of `stage_layers` taking `microbatches` each, from two
  // short simulations where the batch is long (1F1B is periodic once its warm-up is over); nullopt
  // when the model refuses the pipeline.
  std::optional<LayoutRun> timed(int pipelines, const std::vector<int>& stage_layers, std::int64_t microbatches);

  TrainingScenario scenario_;
  int pp_ = 0;
  int nodes_per_stage_ = 0;
  std::vector<int> stage_layers_;
  std::map<std::tuple<int, std::int64_t, std::vector<int>>, std::optional<LayoutRun>> runs_;
};

}  // namespace weft
