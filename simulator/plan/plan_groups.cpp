#include "simulator/plan/execution_plan.hpp"

namespace weft {

std::vector<int> plan_group_members(const ExecutionPlan& plan, const RankCoordinates& c, CommGroupKind kind) {
  const ParallelDims& dims = plan.dims;
  std::vector<int> ranks;
  auto add = [&](RankCoordinates member) { ranks.push_back(static_cast<int>(dims.rank_of(member))); };
  switch (kind) {
    case CommGroupKind::tp:
      for (int tp = 0; tp < dims.tp_at(c.pp); ++tp) add({tp, c.cp, c.dp, c.pp});
      break;
    case CommGroupKind::cp:
      for (int cp = 0; cp < dims.cp; ++cp) add({c.tp, cp, c.dp, c.pp});
      break;
    case CommGroupKind::dp:
      for (int dp = 0; dp < dims.dp_at(c.pp); ++dp) {
        for (int cp = 0; cp < dims.cp; ++cp) add({c.tp, cp, dp, c.pp});
      }
      break;
    case CommGroupKind::embedding:
      add({c.tp, c.cp, c.dp, plan.embedding_stage});
      if (plan.embedding_stage != dims.pp - 1) add({c.tp, c.cp, c.dp, dims.pp - 1});
      break;
    case CommGroupKind::pp:
      for (int pp = 0; pp < dims.pp; ++pp) add({c.tp, c.cp, c.dp, pp});
      break;
  }
  return ranks;
}

}  // namespace weft
