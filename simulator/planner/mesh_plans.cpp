#include "simulator/planner/mesh_plans.hpp"

#include <optional>

#include "simulator/workload/module_meshes.hpp"

namespace weft {
namespace {

// A mesh an encoder may take: module_tp, and module_dp (0: the last module's own dp).
struct EncoderMesh {
  int tp = 0;
  int dp = 0;
};

// The last module's dp where each encoder module (by module index in `encoders`) runs on its
// mesh; nothing where the GPUs do not share out so:
//   gpus / cp = sum over encoders of stages x tp x dp + language stages x tp x dp.
std::optional<int> language_dp(const TrainingScenario& plan, int gpus, const std::vector<std::size_t>& encoders,
                               const std::vector<EncoderMesh>& meshes) {
  const ParallelPlan& p = plan.parallel;
  if (gpus % p.cp != 0) return std::nullopt;
  std::int64_t left = gpus / p.cp;                                           // ranks per context-parallel rank
  std::int64_t per_replica = std::int64_t{p.modality_stages.back()} * p.tp;  // of the last module's dp
  for (std::size_t e = 0; e < encoders.size(); ++e) {
    const std::int64_t ranks = std::int64_t{p.modality_stages[encoders[e]]} * meshes[e].tp;
    if (meshes[e].dp == 0) {
      per_replica += ranks;
    } else {
      left -= ranks * meshes[e].dp;
    }
  }
  if (left <= 0 || left % per_replica != 0) return std::nullopt;
  return static_cast<int>(left / per_replica);
}

}  // namespace

std::vector<PlanCandidate> mesh_plans(const TrainingScenario& modality_plan, const SweepGrid& grid, int gpus) {
  const ParallelPlan& base = modality_plan.parallel;
  const std::vector<ModuleSpec>& modules = modality_plan.model.modules;
  std::vector<EncoderMesh> choices;  // module_tp outermost, as the grid lists them
  for (int tp : grid.module_tp.empty() ? std::vector<int>{base.tp} : grid.module_tp) {
    for (int dp : grid.module_dp.empty() ? std::vector<int>{0} : grid.module_dp) choices.push_back({tp, dp});
  }
  std::vector<std::size_t> encoders;  // the transformer modules before the last
  for (std::size_t m = 0; m + 1 < modules.size(); ++m) {
    if (!modules[m].projector) encoders.push_back(m);
  }
  std::vector<PlanCandidate> out;
  // Every encoder at every choice, the first encoder's choice varying slowest.
  std::vector<std::size_t> chosen(encoders.size(), 0);
  for (bool more = !encoders.empty(); more;) {
    std::vector<EncoderMesh> meshes;
    for (std::size_t c : chosen) meshes.push_back(choices[c]);
    PlanCandidate candidate{modality_plan, {}};
    ParallelPlan& p = candidate.scenario.parallel;
    if (const std::optional<int> dp = language_dp(candidate.scenario, gpus, encoders, meshes)) {
      p.dp = *dp;
      p.module_meshes.assign(modules.size(), PositionMesh{.tp = p.tp, .dp = p.dp});
      bool uniform = true;
      for (std::size_t e = 0; e < encoders.size(); ++e) {
        const PositionMesh mesh{.tp = meshes[e].tp, .dp = meshes[e].dp == 0 ? p.dp : meshes[e].dp};
        p.module_meshes[encoders[e]] = mesh;
        uniform = uniform && mesh == PositionMesh{.tp = p.tp, .dp = p.dp};
      }
      give_projectors_their_readers_meshes(candidate.scenario.model, p.module_meshes);
      if (!uniform) out.push_back(std::move(candidate));  // the uniform plan the sweep has already
    } else {
      p.dp = 0;
      candidate.invalid_rule = "the modules' meshes do not share out the GPU count";
      out.push_back(std::move(candidate));
    }
    more = false;
    for (std::size_t e = encoders.size(); e-- > 0 && !more;) {
      more = ++chosen[e] < choices.size();
      if (!more) chosen[e] = 0;
    }
  }
  return out;
}

}  // namespace weft
