#include "simulator/planner/mesh_plans.hpp"

#include <optional>

#include "simulator/workload/module_meshes.hpp"

namespace weft {
namespace {

// The last module's dp where its encoders run at (module_tp, module_dp), module_dp 0 meaning the
// last module's own; nothing where the GPUs do not share out so.
std::optional<int> language_dp(const TrainingScenario& plan, int gpus, int module_tp, int module_dp) {
  const ParallelPlan& p = plan.parallel;
  if (gpus % p.cp != 0) return std::nullopt;
  const std::int64_t ranks = gpus / p.cp;  // per context-parallel rank
  std::int64_t encoder_stages = 0;
  for (std::size_t m = 0; m + 1 < p.modality_stages.size(); ++m) encoder_stages += p.modality_stages[m];
  const std::int64_t language = std::int64_t{p.modality_stages.back()} * p.tp;
  std::int64_t dp = 0;
  if (module_dp == 0) {
    const std::int64_t per_replica = encoder_stages * module_tp + language;
    if (ranks % per_replica != 0) return std::nullopt;
    dp = ranks / per_replica;
  } else {
    const std::int64_t left = ranks - encoder_stages * module_tp * module_dp;
    if (left <= 0 || left % language != 0) return std::nullopt;
    dp = left / language;
  }
  return static_cast<int>(dp);
}

}  // namespace

std::vector<PlanCandidate> mesh_plans(const TrainingScenario& modality_plan, const SweepGrid& grid, int gpus) {
  const ParallelPlan& base = modality_plan.parallel;
  const std::vector<int> tps = grid.module_tp.empty() ? std::vector<int>{base.tp} : grid.module_tp;
  const std::vector<int> dps = grid.module_dp.empty() ? std::vector<int>{0} : grid.module_dp;
  std::vector<PlanCandidate> out;
  for (int module_tp : tps) {
    for (int module_dp : dps) {
      PlanCandidate candidate{modality_plan, {}};
      ParallelPlan& p = candidate.scenario.parallel;
      const std::optional<int> dp = language_dp(candidate.scenario, gpus, module_tp, module_dp);
      if (!dp) {
        p.dp = 0;
        candidate.invalid_rule = "the modules' meshes do not share out the GPU count";
        out.push_back(std::move(candidate));
        continue;
      }
      p.dp = *dp;
      const PositionMesh encoder{.tp = module_tp, .dp = module_dp == 0 ? *dp : module_dp};
      if (encoder == PositionMesh{.tp = p.tp, .dp = p.dp}) continue;  // the uniform plan
      p.module_meshes.assign(candidate.scenario.model.modules.size(), encoder);
      p.module_meshes.back() = {.tp = p.tp, .dp = p.dp};
      give_projectors_their_readers_meshes(candidate.scenario.model, p.module_meshes);
      out.push_back(std::move(candidate));
    }
  }
  return out;
}

}  // namespace weft
