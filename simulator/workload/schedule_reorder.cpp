#include "simulator/workload/schedule_reorder.hpp"

#include <algorithm>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {

StreamOrder schedule_order(const TrainingWorkload& workload, PipelineSchedule schedule, int chunks) {
  const std::string name(kPipelineScheduleNames.name(schedule));
  if (workload.passes.empty()) throw InputError("schedule " + name + ": the workload has no passes to reorder");
  int stages = 0;
  std::size_t replicas = 0;
  for (const PassOp& pass : workload.passes) {
    stages = std::max(stages, pass.stage + 1);
    replicas = std::max(replicas, static_cast<std::size_t>(pass.replica) + 1);
    if (pass.action.chunk >= chunks) throw InputError("schedule " + name + " does not run every pass of the workload");
  }
  const auto microbatches = static_cast<std::size_t>(workload.microbatches);
  const auto slots = static_cast<std::size_t>(kPassKindCount) * static_cast<std::size_t>(chunks) * microbatches;
  auto slot = [&](const PipelineAction& action) {
    return (static_cast<std::size_t>(action.kind) * static_cast<std::size_t>(chunks) +
            static_cast<std::size_t>(action.chunk)) *
               microbatches +
           static_cast<std::size_t>(action.microbatch);
  };
  // Per stage, each action's place in the schedule's order.
  std::vector<std::vector<std::int64_t>> place(static_cast<std::size_t>(stages), std::vector<std::int64_t>(slots, -1));
  std::size_t actions = 0;
  for (int stage = 0; stage < stages; ++stage) {
    const auto order = pipeline_actions(schedule, stage, stages, chunks, static_cast<int>(microbatches));
    for (std::size_t i = 0; i < order.size(); ++i)
      place[static_cast<std::size_t>(stage)][slot(order[i])] = static_cast<std::int64_t>(i);
    actions += order.size();
  }
  // Each pass's rank in its stage's new order, a recompute pass just before its backward pass.
  const auto per_stage = static_cast<std::int64_t>(slots) * 2;
  std::vector<std::int64_t> rank(workload.graph.op_count(), -1);
  std::size_t passes = 0;
  for (const PassOp& pass : workload.passes) {
    const std::int64_t at = place[static_cast<std::size_t>(pass.stage)][slot(pass.action)];
    if (at < 0) throw InputError("schedule " + name + " does not run every pass of the workload");
    rank[pass.op.value()] = pass.stage * per_stage + at * 2 + (pass.recompute ? 0 : 1);
    passes += pass.recompute ? 0 : 1;
  }
  if (passes != actions * replicas) throw InputError("schedule " + name + " runs passes the workload does not have");
  // On every stream, the passes take the places passes had, in their new order.
  StreamOrder order = issue_order(workload.graph);
  for (auto& ops : order) {
    std::vector<std::size_t> at;
    std::vector<OpId> moved;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (rank[ops[i].value()] < 0) continue;
      at.push_back(i);
      moved.push_back(ops[i]);
    }
    std::stable_sort(moved.begin(), moved.end(), [&](OpId a, OpId b) { return rank[a.value()] < rank[b.value()]; });
    for (std::size_t k = 0; k < at.size(); ++k) ops[at[k]] = moved[k];
  }
  return order;
}

}  // namespace weft
