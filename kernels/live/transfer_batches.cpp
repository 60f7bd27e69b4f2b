#include "kernels/live/transfer_batches.hpp"

namespace weft {
namespace {

bool launches_transfer(const PlanAction& action) {
  return action.kind == ActionKind::isend || action.kind == ActionKind::irecv;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> transfer_batches(const std::vector<PlanAction>& actions) {
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  for (std::size_t i = 0; i < actions.size();) {
    if (!launches_transfer(actions[i])) {
      ++i;
      continue;
    }
    std::size_t last = i;
    while (last < actions.size() && launches_transfer(actions[last])) ++last;
    batches.emplace_back(i, last);
    i = last;
  }
  return batches;
}

}  // namespace weft
