#include "simulator/resilience/morphing_planner.hpp"

#include <algorithm>
#include <limits>

#include "simulator/resilience/layout_simulation.hpp"

namespace weft {

MorphingPlanner::MorphingPlanner(const TrainingScenario& scenario, int nodes) : scenario_(scenario) {
  if (scenario.model.multimodal() || scenario.data) {
    throw InputError("varuna: morphs models of one module on uniform batches only");
  }
  const int layers = scenario.model.layers();
  for (int pp = 1; pp <= layers; ++pp) {
    if (layers % pp == 0) depths_.push_back(pp);
  }
  // Each depth's fewest pipelines that fit give the fewest nodes it runs on.
  const std::int64_t gpus_per_pipeline = std::int64_t{scenario.parallel.tp} * scenario.parallel.cp;
  const int gpus_per_node = scenario.cluster.gpus_per_node;
  std::int64_t least = std::numeric_limits<std::int64_t>::max();
  for (int pp : depths_) {
    const int dp = pp <= replicas(nodes) ? fewest_pipelines(pp, replicas(nodes) / pp) : 0;
    fewest_.push_back(dp);
    if (dp > 0) least = std::min(least, (pp * dp * gpus_per_pipeline + gpus_per_node - 1) / gpus_per_node);
  }
  if (least > nodes) throw InputError("varuna: no layout of the job's nodes holds the model in memory");
  min_nodes_ = static_cast<int>(least);
}

int MorphingPlanner::replicas(int nodes) const {
  return static_cast<int>(std::int64_t{nodes} * scenario_.cluster.gpus_per_node /
                          (std::int64_t{scenario_.parallel.tp} * scenario_.parallel.cp));
}

const std::optional<MorphedLayout>& MorphingPlanner::layout(int pp, int dp) {
  const auto key = std::make_pair(pp, dp);
  if (auto found = layouts_.find(key); found != layouts_.end()) return found->second;
  std::optional<MorphedLayout> out;
  const std::int64_t micro_batch = scenario_.training.micro_batch;
  const std::int64_t microbatches = scenario_.training.global_batch / dp / micro_batch;
  if (microbatches > 0) {
    try {
      const LayoutRun run = simulate_layout(scenario_, pp, dp, microbatches);
      if (!run.oom) out = MorphedLayout{pp, dp, microbatches * micro_batch * dp, run.iteration_s};
    } catch (const InvalidPlan&) {
      // A layout the model refuses (TP x CP across nodes, too many stages): not one to morph to.
    }
  }
  return layouts_.emplace(key, out).first->second;
}

int MorphingPlanner::fewest_pipelines(int pp, int most) {
  // Beyond one sample a pipeline no layout trains anything.
  most =
      static_cast<int>(std::min<std::int64_t>(most, scenario_.training.global_batch / scenario_.training.micro_batch));
  if (most < 1 || !layout(pp, most)) return 0;
  int fits = most;  // invariant: layout(pp, fits) fits; below `lo` none does
  int lo = 1;
  while (lo < fits) {
    const int mid = lo + (fits - lo) / 2;
    if (layout(pp, mid)) {
      fits = mid;
    } else {
      lo = mid + 1;
    }
  }
  return fits;
}

const std::optional<MorphedLayout>& MorphingPlanner::best(int nodes) {
  if (auto found = best_.find(nodes); found != best_.end()) return found->second;
  std::optional<MorphedLayout> best;
  if (nodes >= min_nodes_) {
    for (std::size_t d = 0; d < depths_.size(); ++d) {
      const int dp = replicas(nodes) / depths_[d];
      if (fewest_[d] == 0 || dp < fewest_[d]) continue;  // too few pipelines of that depth fit
      const auto& candidate = layout(depths_[d], dp);
      if (candidate && (!best || candidate->samples_per_s() > best->samples_per_s())) best = candidate;
    }
  }
  return best_.emplace(nodes, best).first->second;
}

}  // namespace weft
