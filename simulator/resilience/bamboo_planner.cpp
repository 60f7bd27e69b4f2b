#include "simulator/resilience/bamboo_planner.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace weft {

BambooPlanner::BambooPlanner(const TrainingScenario& scenario) : scenario_(scenario) {
  if (scenario.data) throw InputError("bamboo: runs uniform batches only");
  ParallelPlan& plan = scenario_.parallel;
  if (plan.recompute != RecomputePolicy::none) {
    throw InputError(
        "bamboo: Bamboo trains without activation recomputation, which its redundant computation conflicts with "
        "(papers/002 §2.7.1): set parallel.recompute to none");
  }
  const int gpus_per_node = scenario.cluster.gpus_per_node;
  if ((plan.tp * plan.cp) % gpus_per_node != 0) {
    throw InputError("bamboo: each stage must span whole nodes (tp x cp a multiple of the " +
                     std::to_string(gpus_per_node) +
                     " GPUs of a node), so that a node's failure takes out one stage, as Bamboo places consecutive "
                     "stages apart");
  }
  plan.redundant_computation = true;
  try {
    validate_training_scenario(scenario_);
  } catch (const InvalidPlan& e) {
    throw InputError(std::string("bamboo: ") + e.what());
  }
  pp_ = plan.pp;
  nodes_per_stage_ = plan.tp * plan.cp / gpus_per_node;
  stage_layers_ = scenario_.layers_per_virtual_stage();
}

std::int64_t BambooPlanner::microbatches(int pipelines) const {
  return scenario_.training.global_batch / pipelines / scenario_.training.micro_batch;
}

std::int64_t BambooPlanner::samples(int pipelines) const {
  return microbatches(pipelines) * scenario_.training.micro_batch * pipelines;
}

std::vector<int> BambooPlanner::merged_layers(const std::vector<int>& lost) const {
  std::vector<int> layers = stage_layers_;
  std::vector<int> gone = lost;
  std::sort(gone.begin(), gone.end(), std::greater<>());
  for (int position : gone) {
    const auto at = static_cast<std::size_t>(position);
    (position == 0 ? layers.back() : layers[at - 1]) += layers[at];
    layers.erase(layers.begin() + position);
  }
  return layers;
}

const std::optional<LayoutRun>& BambooPlanner::simulated(int pipelines, std::int64_t microbatches,
                                                         const std::vector<int>& stage_layers) {
  const auto key = std::make_tuple(pipelines, microbatches, stage_layers);
  if (auto found = runs_.find(key); found != runs_.end()) return found->second;
  std::optional<LayoutRun> out;
  // A pipeline left with one stage has no neighbour to back up.
  TrainingScenario scenario = scenario_;
  scenario.parallel.redundant_computation = stage_layers.size() > 1;
  try {
    out = simulate_layout(scenario, static_cast<int>(stage_layers.size()), pipelines, microbatches, stage_layers);
  } catch (const InvalidPlan&) {
    // A pipeline the model refuses (a stage left with too little): none to run.
  }
  return runs_.emplace(key, out).first->second;
}

std::optional<LayoutRun> BambooPlanner::timed(int pipelines, const std::vector<int>& stage_layers,
                                              std::int64_t microbatches) {
  const auto stages = static_cast<std::int64_t>(stage_layers.size());
  if (microbatches <= 4 * stages) return simulated(pipelines, microbatches, stage_layers);
  // 1F1B repeats one period per microbatch once every stage is busy: from 2 x stages microbatches
  // on, each adds the same time. Memory is the same too: at most `stages` are in flight.
  const auto& half = simulated(pipelines, 2 * stages, stage_layers);
  const auto& full = simulated(pipelines, 4 * stages, stage_layers);
  if (!half || !full) return std::nullopt;
  LayoutRun out = *full;
  out.iteration_s += static_cast<double>(microbatches - 4 * stages) * (full->iteration_s - half->iteration_s) /
                     static_cast<double>(2 * stages);
  return out;
}

std::optional<double> BambooPlanner::samples_per_s(int pipelines, const std::vector<int>& lost) {
  if (pipelines < 1 || microbatches(pipelines) < 1) return std::nullopt;
  const auto healthy = timed(pipelines, stage_layers_, microbatches(pipelines));
  if (!healthy || healthy->oom) return std::nullopt;
  double slowdown = 1.0;
  if (!lost.empty()) {
    // The slow pipeline alone against a healthy one, both taking the same microbatches: the job
    // waits for it at every iteration (and for the healthy ones, should merging stages leave its
    // slowest stage as it was).
    const auto one = timed(1, stage_layers_, microbatches(pipelines));
    const auto slow = timed(1, merged_layers(lost), microbatches(pipelines));
    if (!one || !slow) return std::nullopt;
    slowdown = std::max(1.0, slow->iteration_s / one->iteration_s);
  }
  return static_cast<double>(samples(pipelines)) / (healthy->iteration_s * slowdown);
}

}  // namespace weft
