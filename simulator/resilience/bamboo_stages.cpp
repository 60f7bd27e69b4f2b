#include "simulator/resilience/bamboo_stages.hpp"

#include <algorithm>

namespace weft {

BambooStages::Loss BambooStages::lose_node(std::int64_t pick) {
  const int pp = planner_.pp();
  const auto per_stage = static_cast<std::int64_t>(planner_.nodes_per_stage());
  for (std::vector<int>& gone : lost_) {
    const std::int64_t held = (pp - std::ssize(gone)) * per_stage;
    if (pick >= held) {
      pick -= held;
      continue;
    }
    // The (pick / per_stage)-th stage this pipeline still runs on its own nodes.
    int position = -1;
    for (std::int64_t k = pick / per_stage; k >= 0;) k -= is_lost(gone, ++position) ? 0 : 1;
    if (is_lost(gone, (position + 1) % pp) || is_lost(gone, (position + pp - 1) % pp)) return Loss::fatal;
    gone.push_back(position);
    return Loss::covered;
  }
  return Loss::unused;
}

std::optional<double> BambooStages::samples_per_s() const {
  const int pipelines = this->pipelines();
  std::optional<double> slowest = planner_.samples_per_s(pipelines, {});
  for (const std::vector<int>& gone : lost_) {
    if (gone.empty() || !slowest) continue;
    const auto pace = planner_.samples_per_s(pipelines, gone);
    slowest = pace ? std::min(*slowest, *pace) : pace;
  }
  return slowest;
}

bool BambooStages::is_lost(const std::vector<int>& gone, int position) {
  return std::find(gone.begin(), gone.end(), position) != gone.end();
}

}  // namespace weft
