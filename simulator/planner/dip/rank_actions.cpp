#include "simulator/planner/dip/rank_actions.hpp"

#include <algorithm>
#include <tuple>

namespace weft::dip {
namespace {

struct Timed {
  TimeNs time = 0;
  int order = 0;  // 0: launches (receives and sends); 1: waits; 2: a stage starting
  std::size_t sequence = 0;
  RankAction action;

  bool operator<(const Timed& other) const {
    return std::tie(time, order, sequence) < std::tie(other.time, other.order, other.sequence);
  }
};

}  // namespace

std::vector<std::vector<RankAction>> rank_actions(std::span<const PipelineStage> stages,
                                                  const StageSchedule& schedule) {
  std::vector<std::vector<Timed>> timed(schedule.order.size());
  std::size_t sequence = 0;
  auto add = [&](int rank, TimeNs time, int order, const RankAction& action) {
    timed[static_cast<std::size_t>(rank)].push_back({time, order, sequence++, action});
  };
  std::uint32_t transfers = 0;
  for (std::size_t v = 0; v < stages.size(); ++v) {
    add(stages[v].rank, schedule.start[v], 2,
        {stages[v].backward ? ActionKind::backward_stage : ActionKind::forward_stage, v});
    for (std::size_t u : stages[v].predecessors) {
      if (stages[u].rank == stages[v].rank) continue;
      const std::uint32_t transfer = transfers++;
      const int sender = stages[u].rank;
      const int receiver = stages[v].rank;
      add(sender, schedule.end[u], 0, {ActionKind::isend, u, transfer, receiver, u, v});
      add(sender, schedule.end[v], 1, {ActionKind::wait_isend, u, transfer, receiver, u, v});
      add(receiver, schedule.end[u], 0, {ActionKind::irecv, v, transfer, sender, u, v});
      add(receiver, schedule.start[v], 1, {ActionKind::wait_irecv, v, transfer, sender, u, v});
    }
  }
  std::vector<std::vector<RankAction>> out(timed.size());
  for (std::size_t rank = 0; rank < timed.size(); ++rank) {
    std::sort(timed[rank].begin(), timed[rank].end());
    for (const Timed& t : timed[rank]) out[rank].push_back(t.action);
  }
  return out;
}

}  // namespace weft::dip
